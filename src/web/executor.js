// The executor's waits (src/web/executor.rs): how the module waits on the
// browser without a future of its own. Every wait's end calls back one
// function of the module's, `f(id, tag, ok, value)`, with the executor's id
// and the wait's tag. And its channels (src/web/channel.rs). A wait of an
// instance that stopped (instance.js) is not delivered: the fresh one has
// its own executors.
import { unref } from "./runtime.js";
import { generation, live, owned } from "./held.js";

const delay = (ms) => Math.min(Math.max(0, ms), 2147483647);

// `promise` settled: `f(id, tag, true, value)` or `f(id, tag, false, error)`.
export function settled(promise, f, id, tag) {
  const g = generation();
  promise.then((v) => live(g) && f(id, tag, true, v), (e) => live(g) && f(id, tag, false, e));
}

// `(value) => f(id, tag, true, value)`: a listener (a channel's message, an
// `online` event, a signal's abort).
export function bind(f, id, tag) {
  const g = generation();
  return (v) => { if (live(g)) f(id, tag, true, v); };
}

// `f(id, tag, true)` after `ms`: the engine's one timer, which keeps no
// server process alive (a pending call is held by its promise). Returns the
// timer, for clearTimer.
export function idleTimer(ms, f, id, tag) {
  const g = generation();
  return unref(setTimeout(() => live(g) && f(id, tag, true), delay(ms)));
}

// `f(id, tag, true)` in a task of its own, so that input and rendering the
// page has waiting go first: the next slice of a long piece of work.
// `scheduler.postTask` where there is one, else a message (no timer's 4 ms
// clamp), else a timer. Each as the module found it when it loaded: a
// script that sets `globalThis.scheduler` later is never handed the work.
const postTask = typeof globalThis.scheduler?.postTask === "function"
  ? globalThis.scheduler.postTask.bind(globalThis.scheduler) : null;
const Ports = typeof MessageChannel === "function" ? MessageChannel : null;
export function nextTask(f, id, tag) {
  const g = generation();
  const run = () => live(g) && f(id, tag, true);
  if (postTask) return void postTask(run);
  if (!Ports) return void setTimeout(run, 0);
  const { port1, port2 } = new Ports();
  port1.onmessage = () => { port1.close(); run(); };
  port2.postMessage(0);
}

export function clearTimer(timer) { if (timer !== undefined) clearTimeout(timer); }

// A lock asked for by a client (`promise`: its release function, or null
// or undefined when not granted): let go when the instance stops or the
// client's holdings `of` are let go (its release answering once the lock is
// free, locks.js), at once if granted after that.
export function ownLock(promise, of) {
  const g = generation();
  return promise.then((release) => {
    if (typeof release !== "function") return release;
    if (!live(g) || of.gone) { release(); return null; }
    return owned(release, of);
  });
}

// `f(id, tag, true)` once `signal` aborts (a hostile signal that refuses the
// listener leaves the wait not abortable rather than failing the call).
export function onAbort(signal, f, id, tag) {
  const g = generation();
  try { signal.addEventListener("abort", () => live(g) && f(id, tag, true), { once: true }); } catch { /* see above */ }
}

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

export function channelOpen(name, of) {
  const open = { name };
  if (Channel) {
    open.channel = new Channel(name);
    // Node.js: an open channel would keep the process alive after its work.
    if (typeof open.channel.unref === "function") open.channel.unref();
  }
  open.close = owned(() => {
    open.closed = true;
    open.channel?.close();
  }, of);
  return open;
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

// Hears every announcement on `name`: this runtime's clients, other tabs and
// workers (through a BroadcastChannel of its own), or only this runtime's
// where there is none. Returns the function that stops it. Node.js: a
// channel with a listener keeps the process alive (setting `onmessage`
// refs it), unless it is the SDK's own (`background`), which must not.
// The module's own ears (`background`) are let go with their client's
// holdings `of` (and the instance).
export function channelListen(name, listener, background, of) {
  let stop;
  if (!Channel) {
    if (!local.has(name)) local.set(name, new Set());
    const own = (data) => listener(data);
    local.get(name).add(own);
    stop = () => { local.get(name)?.delete(own); };
  } else {
    const channel = new Channel(name);
    channel.onmessage = (e) => listener(e.data);
    if (background && typeof channel.unref === "function") channel.unref();
    stop = () => channel.close();
  }
  return background ? owned(stop, of) : stop;
}
// A listener's event (`onEvent`, `onHistory`, `onEscalated`), written by
// the module as JSON text (crates/core/src/engine/events.rs), delivered after the
// current task's work: never before a send it precedes; what the listener
// returns, throws or rejects changes nothing.
export function telemetryNote(sink, event) {
  queueMicrotask(() => {
    try { Promise.resolve(sink(JSON.parse(event))).catch(() => {}); } catch { /* the listener's own failure */ }
  });
}
