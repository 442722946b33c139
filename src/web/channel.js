// BroadcastChannel, kept to what the SDK needs (src/web/channel.rs), and the
// listeners of this runtime for runtimes without it (workerd), so that a
// subscriber still hears what this runtime's clients write.

const local = new Map(); // channel name -> Set of listeners, where there is no BroadcastChannel

// A BroadcastChannel where it cannot keep a server process alive: browsers
// and their workers, and runtimes whose channels can be unref'd (Node.js,
// Bun). Deno's cannot (an open one holds the process after its work is
// done): there, as where there is none, this runtime's clients hear each other.
const Channel = typeof BroadcastChannel === "function" && ("unref" in BroadcastChannel.prototype || !globalThis.Deno)
  ? BroadcastChannel : undefined;

export function channelOpen(name) {
  if (!Channel) return { name };
  const channel = new Channel(name);
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
// where there is none. Returns the function that stops it. Node.js: a
// channel with a listener keeps the process alive (setting `onmessage`
// refs it), unless it is the SDK's own (`background`), which must not.
export function channelListen(name, listener, background) {
  if (!Channel) {
    if (!local.has(name)) local.set(name, new Set());
    const own = (data) => listener(data);
    local.get(name).add(own);
    return () => { local.get(name)?.delete(own); };
  }
  const channel = new Channel(name);
  channel.onmessage = (e) => listener(e.data);
  if (background && typeof channel.unref === "function") channel.unref();
  return () => channel.close();
}
