// The journal's store, one contract over every backend (src/web/executor.rs
// performs the engine's storage operations through it): IndexedDB's
// (`idbKv`), localStorage's and memory's (builtin_kv.js), or a caller's
// adapter ({ get, set, delete, list, compareAndSet?, deleteMany? }). Each
// operation answers a promise; what a value means is the module's to read.

import { callWithin } from "../runtime.js";

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
  for (const name of ["get", "set", "delete", "list"]) {
    if (typeof kv?.[name] !== "function") throw Object.assign(new Error(`the storage adapter has no \`${name}\` method`), { name: "NotSupportedError" });
  }
  const call = (name, ...args) => immediate
    ? Promise.resolve().then(() => kv[name](...args))
    : callWithin(kv[name], kv, args, timeoutMs, `the storage adapter's ${name}()`);
  const stored = (value, what) => {
    if (builtin || value == null || typeof value === "string") return value ?? null;
    throw Object.assign(new Error(`the adapter's ${what} did not return a string`), { name: "ReadError" });
  };
  const get = async (key) => stored(await call("get", key), `get(${key})`);
  return {
    builtin,
    swaps: typeof kv.compareAndSet === "function",
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
    async put(key, text, expected, flush) {
      if (typeof kv.compareAndSet === "function") {
        if (await call("compareAndSet", key, expected, text, flush) === true) return true;
      } else {
        const current = revisionOf(await get(key));
        if (current === expected) return (await call("set", key, text), true);
      }
      const now = await get(key);
      return now == null ? null : revisionOf(now);
    },
    async remove(keys) {
      if (typeof kv.deleteMany === "function") return void await call("deleteMany", keys);
      for (const key of keys) await call("delete", key);
    },
    // Moves an unreadable entry aside (quarantine), never dropping it.
    async aside(from, to) {
      const value = await call("get", from);
      if (value == null) return;
      await call("set", to, value);
      await call("delete", from);
    },
  };
}
