// BroadcastChannel, kept to what the SDK needs (src/web/channel.rs), and the
// listeners of this runtime for runtimes without it (workerd), so that a
// subscriber still hears what this runtime's clients write.

const local = new Map(); // channel name -> Set of listeners, where there is no BroadcastChannel

export function channelOpen(name) {
  if (typeof BroadcastChannel === "undefined") return { name };
  const channel = new BroadcastChannel(name);
  // Node.js: an open channel would keep the process alive after its work.
  if (typeof channel.unref === "function") channel.unref();
  return { name, channel };
}

// An intent's change for other tabs and subscribers (the message's JSON text:
// `{ intentId, state, revision }`, which every build reads, and the event
// fields of version 1 beside them), posted once the current task's work is
// done: a state written just before a send is announced after the request
// has left, not before it. Not in a later task: a Service Worker may be
// stopped once its event's work settles, and its last announcement would be
// lost. A channel closed meanwhile (the client freed) posts nothing.
export function channelAnnounce(open, message) {
  queueMicrotask(() => {
    if (open.closed) return;
    const data = JSON.parse(message);
    if (open.channel) {
      try { open.channel.postMessage(data); } catch {}
    } else {
      for (const listener of local.get(open.name) ?? []) listener(data);
    }
  });
}

export function channelClose(open) {
  open.closed = true;
  open.channel?.close();
}

// Hears every announcement on `name`: this runtime's clients, other tabs and
// workers (through a BroadcastChannel of its own), or only this runtime's
// where there is none. Returns the function that stops it.
export function channelListen(name, listener) {
  if (typeof BroadcastChannel === "undefined") {
    if (!local.has(name)) local.set(name, new Set());
    const own = (data) => listener(data);
    local.get(name).add(own);
    return () => { local.get(name)?.delete(own); };
  }
  const channel = new BroadcastChannel(name);
  if (typeof channel.unref === "function") channel.unref();
  channel.onmessage = (e) => listener(e.data);
  return () => channel.close();
}

// Resolves when intent `a` or `b` is next announced on `name` (written by
// this runtime, another tab or a worker), or after `ms`: what a queued
// intent waits on (the one before it, and itself, if withdrawn) before it
// looks at its scope again.
export function channelNext(name, a, b, ms) {
  return new Promise((resolve) => {
    const done = () => { clearTimeout(timer); stop(); resolve(); };
    const timer = setTimeout(done, ms);
    const stop = channelListen(name, (data) => { if (data && (data.intentId === a || data.intentId === b)) done(); });
  });
}
