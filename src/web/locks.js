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

// Waits up to `timeoutMs` for the lock: resolves to a release function, to
// null on timeout, and to undefined when the Locks API is missing.
export function lockWait(name, timeoutMs) {
  const locks = globalThis.navigator && globalThis.navigator.locks;
  if (!locks) return Promise.resolve(undefined);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), Math.min(Math.max(0, timeoutMs), 2147483647));
  return new Promise((resolve, reject) => {
    locks
      .request(name, { signal: controller.signal }, () => {
        clearTimeout(timer);
        return new Promise((release) => resolve(() => release()));
      })
      .catch((e) => (e && e.name === "AbortError" ? resolve(null) : reject(e)));
  });
}

export function channelOpen(name) {
  if (typeof BroadcastChannel === "undefined") return null;
  const channel = new BroadcastChannel(name);
  // Node.js: an open channel would keep the process alive after its work.
  if (typeof channel.unref === "function") channel.unref();
  return channel;
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
