// Timers, randomness and bounded callback calls (src/web/time.rs, random.rs, mod.rs).

// Timers take at most 2^31 - 1 ms: a longer delay would fire at once.
const delay = (ms) => Math.min(Math.max(0, ms), 2147483647);

// A timer that does not keep a Node.js, Bun or Deno process alive (Deno's
// setTimeout returns a number, unref'd through Deno.unrefTimer).
export function unref(timer) {
  if (typeof timer === "number") globalThis.Deno?.unrefTimer?.(timer);
  else timer?.unref?.();
  return timer;
}

// `idle`: a pause of work no caller waits for (the history probe's next
// look), which does not keep a server process alive: only a pending call does.
export function sleepMs(ms, idle) {
  return new Promise((r) => { const t = setTimeout(r, delay(ms)); if (idle) unref(t); });
}

// Every pending call keeps a server process alive until it settles, as a
// pending fetch would, whatever it waits on inside (an unref'd timer, the
// history probe): one ref'd timer while any call is pending. Browsers keep
// their pages alive anyway. `hold` is called from the module, perhaps with
// the stack nearly spent (the module then stops): it only counts, and the
// timer is made or cleared in a microtask, with the whole stack, so that no
// timer half-made there holds the process for ever. The timer is made when
// the first call starts and cleared when the last settles, not made again at
// every change: 500 calls in flight would remake it at each settling.
let pending = 0, alive, syncing;
function changed() {
  if (!syncing) queueMicrotask(() => {
    syncing = false;
    if (pending) alive ??= setInterval(() => {}, 1 << 30);
    else if (alive !== undefined) { clearInterval(alive); alive = undefined; }
  });
  syncing = true;
}
export function hold(promise) {
  let counted;
  const done = () => counted && (pending--, changed());
  promise.then(done, done);
  changed();
  pending++;
  counted = true;
  return promise;
}

export function randomBytes(n) {
  const b = new Uint8Array(n);
  globalThis.crypto.getRandomValues(b);
  return b;
}

export function callWithin(f, self, args, ms, what) {
  let returned;
  try { returned = f.apply(self, args); } catch (e) { return Promise.reject(e); }
  if (!(ms > 0)) return Promise.resolve(returned);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const e = new Error(`${what} did not settle within ${ms} ms`);
      e.name = "TimeoutError";
      e.deadlineMs = ms; // marks our deadline, not a TimeoutError the callback threw
      reject(e);
    }, delay(ms));
    Promise.resolve(returned).then((v) => { clearTimeout(timer); resolve(v); },
                                   (e) => { clearTimeout(timer); reject(e); });
  });
}

// See `caller_json` in src/web/mod.rs: the value as JSON would carry it, as
// a fresh plain value, or (`asText`, `caller_body`) its JSON text, which the
// module reads itself. Its nesting is the reader's to check (it reads it
// anyway); `tooDeep` measures it only for the message of one too deep.
export function asJson(value, what, maxChars, asText) {
  let text;
  try { text = JSON.stringify(value); } catch (e) {
    throw new TypeError(`${what} cannot be sent as JSON: ${e && e.message}`);
  }
  if (text === undefined) throw new TypeError(`${what} cannot be sent as JSON`);
  if (text.length > maxChars) {
    throw new RangeError(`${what} is ${text.length} characters of JSON; the limit is ${maxChars} (maxBodyChars)`);
  }
  return asText ? text : JSON.parse(text);
}

// Throws what a plain value too deep for the walker (`maxDepth`) is told,
// its depth counted level by level (no recursion to exhaust the stack, and
// no call spread over an array of any length; a plain value's only objects
// are its objects and arrays).
export function tooDeep(value, what, maxDepth) {
  let deepest = 0;
  for (let level = [value]; (level = level.filter((v) => Object(v) === v)).length; deepest++) {
    level = level.flatMap(Object.values);
  }
  throw new RangeError(`${what} nests ${deepest} levels deep; the limit is ${maxDepth} (maxBodyDepth)`);
}

// A field of what the caller gave, read as its own: a value the object
// holds itself, or its class's (an adapter's methods), never one inherited
// from a built-in prototype: a script that set `Object.prototype.headers`
// is never read as a caller's option, answer or adapter. The prototypes and
// `hasOwnProperty` are those of this module's load.
const builtin = new Set([Object, Function, Array, String, Number, Boolean, Symbol, BigInt].map((c) => c.prototype));
const hasOwn = Function.prototype.call.bind(Object.prototype.hasOwnProperty);
const protoOf = Object.getPrototypeOf;
export function own(o, k) {
  for (let p = o; p != null && !builtin.has(p); p = protoOf(p)) if (hasOwn(p, k)) return o[k];
  return undefined;
}

// An array of strings, joined by line breaks (one string crosses into the
// module, which splits it where it checks a name), or undefined for anything
// else.
export function stringList(v) {
  return Array.isArray(v) && v.every((s) => typeof s === "string") ? v.join("\n") : undefined;
}
