// Web Locks and BroadcastChannel, kept to what the SDK needs.

// Resolves to a release function when the lock was free, to null when
// another tab or worker holds it, and to undefined when the Locks API is
// missing (automatic resume is then off rather than racing).
export function lockTry(name) {
  const locks = globalThis.navigator && globalThis.navigator.locks;
  if (!locks) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    locks
      .request(name, { ifAvailable: true }, (lock) => {
        if (!lock) {
          resolve(null);
          return undefined;
        }
        // Held until the returned promise settles: until release() is called.
        return new Promise((release) => resolve(() => release()));
      })
      .catch(reject);
  });
}

export function channelOpen(name) {
  return typeof BroadcastChannel === "undefined" ? null : new BroadcastChannel(name);
}

export function channelPost(channel, message) {
  if (channel) channel.postMessage(message);
}

export function channelListen(channel, callback) {
  if (channel) channel.onmessage = (event) => callback(event.data);
}

export function channelClose(channel) {
  if (channel) channel.close();
}
