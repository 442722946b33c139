// The module's one store, one contract over every backend (the client's
// executor performs the engine's storage operations through it, the consumer
// and the tests through `AnyStore`, src/web/storage/mod.rs): IndexedDB's
// (`idbKv`), localStorage's and memory's (builtin_kv.js), or a caller's
// adapter ({ get, set, delete, list, compareAndSet?, deleteMany? }). Each
// operation answers a promise; what a value means is the module's to read.

import { callWithin, own } from "../runtime.js";

// The revision of a stored record (its JSON text, or the object IndexedDB
// keeps): 0 when absent, -1 when unreadable (it matches no expected revision).
export function revisionOf(value) {
  if (value == null) return 0;
  try {
    const revision = (typeof value === "string" ? JSON.parse(value) : value).revision;
    return Number.isSafeInteger(revision) ? revision : -1;
  } catch {
    return -1;
  }
}

// Wraps a key-value object: `builtin` (IndexedDB, localStorage, memory):
// shared only under the runtime's Web Locks, and may hand back what it
// keeps; `immediate` (localStorage, memory): called directly; otherwise each
// operation is bounded by `timeoutMs` (0: unbounded) and a caller's adapter
// answers strings only.
export function openStore(kv, builtin, immediate, timeoutMs) {
  // The adapter's methods, read once as its own (or its class's), never a
  // built-in prototype's: a polluted Object.prototype adds no compareAndSet.
  // The first four are required; `destroy` is IndexedDB's own (idbKv). No
  // prototype: an absent method is absent, whatever Object.prototype holds.
  const m = Object.create(null);
  ["get", "set", "delete", "list", "compareAndSet", "deleteMany", "destroy"].forEach((name, i) => {
    const f = kv == null ? undefined : own(kv, name);
    if (typeof f === "function" && (builtin || name !== "destroy")) m[name] = f;
    else if (i < 4) throw Object.assign(new Error(`the storage adapter has no \`${name}\` method`), { name: "NotSupportedError" });
  });
  const call = (name, ...args) => immediate
    ? Promise.resolve().then(() => m[name].apply(kv, args))
    : callWithin(m[name], kv, args, timeoutMs, `the storage adapter's ${name}()`);
  const stored = (value, what) => {
    if (builtin || value == null || typeof value === "string") return value ?? null;
    throw Object.assign(new Error(`the adapter's ${what} did not return a string`), { name: "ReadError" });
  };
  const get = async (key) => stored(await call("get", key), `get(${key})`);
  return {
    builtin,
    swaps: !!m.compareAndSet,
    get,
    // Every [key, value] under `prefix`; values a store lists without are read.
    async list(prefix) {
      const found = await call("list", prefix);
      if (!Array.isArray(found)) throw Object.assign(new Error(`the adapter's list(${prefix}) did not return an array`), { name: "ReadError" });
      const out = [];
      for (const entry of found) {
        const [key, value] = Array.isArray(entry) ? entry : [entry];
        if (typeof key !== "string" || !key.startsWith(prefix)) continue;
        const kept = Array.isArray(entry) && (builtin || typeof value === "string") ? value : await get(key);
        if (kept != null) out.push([key, kept]);
      }
      return out;
    },
    // A compare-and-swap write: `true`, or the revision found when it is not
    // `expected` (null: absent). Without compareAndSet: read, compare, write
    // (the Web Lock around each intent keeps one writer across tabs).
    // `body`: an intent record's large body, its text as the caller gave it,
    // to go between `text` and `after` (its `command.body`, a string): put
    // into the object IndexedDB keeps, or written in as a JSON string.
    async put(key, text, expected, flush, after, body) {
      if (body !== undefined) {
        if (builtin && !immediate) (text = JSON.parse(`${text}0${after}`)).command.body = body;
        else text = text + JSON.stringify(body) + after;
      }
      if (m.compareAndSet) {
        if (await call("compareAndSet", key, expected, text, flush) === true) return true;
      } else {
        const current = revisionOf(await get(key));
        if (current === expected) return (await call("set", key, text), true);
      }
      const now = await get(key);
      return now == null ? null : revisionOf(now);
    },
    async remove(keys) {
      if (m.deleteMany) return void await call("deleteMany", keys);
      for (const key of keys) await call("delete", key);
    },
    // Lets go of the store where it is the namespace's alone (IndexedDB's
    // database, deleted once nothing is left in it: sign-out's purge).
    async destroy() {
      if (m.destroy) await call("destroy");
    },
    // Moves an unreadable entry aside (quarantine), never dropping it, kept
    // with why (`quarantined()` reads it): IndexedDB keeps the object, a
    // string store its JSON text.
    async aside(from, to, reason) {
      const value = await call("get", from);
      if (value == null) return;
      const kept = { quarantinedFor: reason, value };
      await call("set", to, builtin && !immediate ? kept : JSON.stringify(kept));
      await call("delete", from);
    },
  };
}
