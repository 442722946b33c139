// The module instance's life (src/web/executor.rs): its restart after a
// trap. An exception that unwinds through the module (a trap, the engine's
// stack running out inside it) does not restore its shadow-stack pointer,
// and what it was changing (a RefCell, the allocator) stays half-changed:
// that instance is never called again. What it held is let go (held.js),
// its waiting calls end, and a fresh instance of the same compiled module
// takes every client over from its journal.

import { life, outOfStack, retired } from "./held.js";

let hooks; // the glue's: { reset(), adopt(client, fresh), classes, atOnce }
const stopped = []; // [what a stopped instance held, what stopped it (text)]: let go before a restart
let releasing = []; // the locks let go of, each settling once free
const takers = new Map(); // each client's move to a fresh instance, (why, restarts, free) => …, to the generation it is on
const takerOf = new WeakMap(); // client -> its move, forgotten when it is freed
// A client collected without free(): its move (which holds its options and
// its store) is forgotten too.
const collected = typeof FinalizationRegistry === "function" ? new FinalizationRegistry((take) => takers.delete(take)) : undefined;
let moving = false; // whether a client is still to move onto the fresh instance
let why; // what stopped the last instance, for the clients' move
const restarts = []; // when each restart was (the last minute's)
const blamed = new Map(); // intent -> how many stops came while the module handled it
let aside = []; // the intents to set aside before the clients resume (blamed twice)
const LIMIT = 5;
const WINDOW_MS = 60_000;

// The glue's exports, each guarded: whatever unwinds through one stops the
// instance. A thrown value the module returns (a `Result`'s error) is
// thrown by the glue after the call, so only what unwound through it lands
// here. The catch calls nothing it needs (the stack may be spent): the
// restart is scheduled if it can be, else by the method's own end or the
// next call.
export function guard(exports) {
  const guarded = {};
  for (const name in exports) {
    const f = exports[name];
    guarded[name] = typeof f !== "function" ? f : function () {
      // Named again by the executor when it handles an intent's work.
      life.handling = "";
      try {
        return f.apply(this, arguments);
      } catch (e) {
        if (!life.dead) { life.dead = e; life.gen++; life.blamed = life.handling; }
        soon();
        throw e;
      }
    };
  }
  return guarded;
}

let scheduled = false;
const deferred = []; // calls made while stopped: { what, run, resolve, reject }
// The restart, after the current task's stack is gone (the caller may be
// at its edge), then the calls made meanwhile, each with the whole stack.
function soon() {
  if (scheduled || !(life.dead || moving)) return;
  try {
    queueMicrotask(() => {
      scheduled = false;
      try { restart(); } catch { /* the next call tries */ }
      for (const call of deferred.splice(0)) {
        try {
          if (life.dead || moving) revive(call.what);
          call.resolve(call.run());
        } catch (e) {
          call.reject(e);
        }
      }
    });
    scheduled = true;
  } catch { /* no stack left even for this: see above */ }
}

// A call that answers with a promise, made while the instance is stopped:
// made after the restart (a call at the stack's edge would stop the fresh
// one at once). Where not even that can be arranged, it revives at once.
function later(what, run) {
  soon();
  if (!scheduled) {
    revive(what);
    return run();
  }
  return new Promise((resolve, reject) => deferred.push({ what, run, resolve, reject }));
}

// What stopped an instance, as what it held and its clients are told it:
// "RangeError: Maximum call stack size exceeded".
const said = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

// Lets go of what stopped instances held, starts a fresh instance and
// moves every client onto it. Safe to call again where it stopped: a step
// cut short by the stack's end is taken again next time.
function restart() {
  if (life.dead) {
    const text = said(life.dead);
    const was = retired();
    if (was) stopped.push([was, text]);
    while (stopped.length) {
      const [all, stop] = stopped[0];
      for (const letGo of all) {
        try {
          // A lock's letting go answers when it is free (locks.js).
          const free = letGo(stop);
          if (free) releasing.push(free.then(() => {}, () => {}));
        } catch (e) {
          if (outOfStack(e)) throw e; // kept, let go by the next try
        }
        all.delete(letGo);
      }
      stopped.shift();
    }
    const now = Date.now();
    while (restarts.length && restarts[0] <= now - WINDOW_MS) restarts.shift();
    if (restarts.length >= LIMIT) return;
    hooks.reset();
    restarts.push(now);
    why = life.dead;
    life.dead = undefined;
    // A trap while an intent's work was handled (not the stack running
    // out: that is the caller's depth) blames it; twice, and it is set
    // aside, so that no tab drives it into a stop again.
    const id = life.blamed;
    if (id && !outOfStack(why)) {
      const n = (blamed.get(id) ?? 0) + 1;
      blamed.set(id, n);
      if (n > 1) { aside.push(id); blamed.delete(id); }
    }
    moving = true;
  }
  if (!moving) return;
  const free = Promise.all(releasing);
  const text = said(why);
  for (const [take, on] of takers) {
    if (on === life.gen) continue;
    let kept;
    try {
      kept = take(text, restarts.length, free, aside);
    } catch (e) {
      if (outOfStack(e)) throw e; // moved by the next try
    }
    if (kept === false) takers.delete(take);
    else takers.set(take, life.gen);
  }
  moving = false;
  releasing = [];
  aside = [];
}

/** A call into a stopped instance: restarted first, or told why it cannot be. */
function revive(what) {
  try { restart(); } catch { /* below */ }
  if (!life.dead && !moving) return;
  const message = String(life.dead && life.dead.message || why && why.message || life.dead || why);
  throw Error(life.dead && restarts.length >= LIMIT
    ? `${what}: the module stopped ${LIMIT} times within a minute (last: ${message}); it restarts again once a minute has passed, or reload the page`
    : `${what}: the module stopped (${message}) and could not restart yet; call again`, { cause: life.dead || why });
}

// The methods the module calls itself, taken off the public class: a caller
// never sees or calls them.
const friends = {};
const pluck = (o, k) => { const f = o[k]; delete o[k]; return f; };

// Called by the glue once loaded: its reset, its clients' move, and its
// classes, whose every method revives a stopped instance before it runs
// (`atOnce`: the methods that answer with something else than a promise;
// the others wait for the restart).
export function instanceHooks(h) {
  hooks = h;
  for (const C of h.classes) {
    // `free()` (and `[Symbol.dispose]`) of an object of a stopped instance
    // only drops it: that instance is never called again. A second one does nothing.
    const free = C.prototype.free;
    const freed = function () {
      // Freed already (a second free(), `using` after it): nothing to do.
      // The glue would pass the module a null object, which throws through it.
      if (!this.__wbg_ptr) return;
      takers.delete(takerOf.get(this));
      try { restart(); } catch { /* below */ }
      if (life.dead || moving) return void this.__destroy_into_raw();
      life.freeing = true;
      try {
        return free.apply(this, arguments);
      } finally {
        life.freeing = false;
      }
    };
    if (free) C.prototype.free = freed;
    if (free && Symbol.dispose && C.prototype[Symbol.dispose] === free) C.prototype[Symbol.dispose] = freed;
    // The reopening as it is (it runs while the module moves).
    if (C.__reopen) friends.reopen = pluck(C, "__reopen");
    for (const target of [C, C.prototype]) {
      for (const name of Object.getOwnPropertyNames(target)) {
        if ((name.startsWith("__") && name !== "__setAside") || name === "constructor" || name === "free") continue;
        const d = Object.getOwnPropertyDescriptor(target, name);
        const what = `${C.name}.${name}`;
        const wrap = (f) => function () {
          // A freed object's method, or one detached from its object, would
          // reach the module with no object (it throws through it). A static
          // one (`connect`) needs none: it may be called detached.
          if (target !== C && !this?.__wbg_ptr) {
            throw TypeError(`${what}: the object was freed, or the method was called detached from it`);
          }
          if (life.dead || moving) {
            if (!h.atOnce.includes(name) && !d.get) return later(what, () => f.apply(this, arguments));
            revive(what);
          }
          try {
            return f.apply(this, arguments);
          } finally {
            if (life.dead || moving) soon();
          }
        };
        if (typeof d.value === "function") d.value = wrap(d.value);
        else if (d.get) d.get = wrap(d.get);
        else continue;
        Object.defineProperty(target, name, d);
      }
    }
    // Setting an intent aside, revived first as every method is.
    if (C.prototype.__setAside) friends.setAside = pluck(C.prototype, "__setAside");
  }
}

// A client moves to a fresh instance when its own stops: it
// is opened again over the same store (a memory journal too) with the same
// options, `onRestart` is told, and once the locks the stopped instance held
// are free its intents are confirmed and driven again (`resume`, each under
// its lock). A client freed or collected is left behind.
export function carry(client, options, store) {
  // Where there is no WeakRef, the client is kept as long as the page. No
  // closure here may name `client`: it would hold it (and its store) for good.
  const ref = typeof WeakRef === "function" ? new WeakRef(client) : { o: client, deref() { return this.o; } };
  const take = (why, restarts, free, aside) => {
    const c = ref.deref();
    if (!c || !c.__wbg_ptr) return false;
    hooks.adopt(c, friends.reopen(options, store));
    // What stopped the module twice is set aside (where it is this client's) before anything is driven.
    free.then(() => Promise.all(aside.map((id) => c.__wbg_ptr && friends.setAside.call(c, id))))
      .then(() => c.__wbg_ptr && c.resume()).catch(() => { /* each intent stays in the journal */ });
    try {
      const onRestart = options.onRestart;
      if (typeof onRestart === "function") {
        Promise.resolve(onRestart({ version: 1, kind: "restarted", at: Date.now(), restarts, reason: why, setAside: aside })).catch(() => {});
      }
    } catch { /* the listener's own failure */ }
  };
  takers.set(take, life.gen);
  takerOf.set(client, take);
  collected?.register(client, take);
}
