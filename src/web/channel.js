// BroadcastChannel, kept to what the SDK needs (src/web/channel.rs).

export function channelOpen(name) {
  if (typeof BroadcastChannel === "undefined") return null;
  const channel = new BroadcastChannel(name);
  // Node.js: an open channel would keep the process alive after its work.
  if (typeof channel.unref === "function") channel.unref();
  return channel;
}

// An intent's state for other tabs, `{ intentId, state, revision }`, posted
// once the current task's work is done: a state written just before a send
// is announced after the request has left, not before it. Not in a later
// task: a Service Worker may be stopped once its event's work settles, and
// its last announcement would be lost. A channel closed meanwhile (the
// client freed) posts nothing.
export function channelAnnounce(channel, intentId, state, revision) {
  if (channel) queueMicrotask(() => { try { channel.postMessage({ intentId, state, revision }); } catch {} });
}

export function channelClose(channel) {
  if (channel) channel.close();
}
