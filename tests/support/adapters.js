// JS adapters for the storage tests: a Map-backed KV store (optionally with
// compareAndSet) and one whose writes fail like a full or broken store.

export function memoryAdapter(atomic) {
  const m = new Map();
  const a = {
    raw: m,
    async get(k) { return m.has(k) ? m.get(k) : null; },
    async set(k, v) { m.set(k, v); },
    async delete(k) { m.delete(k); },
    async list(p) { return [...m.entries()].filter(([k]) => k.startsWith(p)); },
  };
  if (atomic) {
    a.compareAndSet = async (k, expected, v) => {
      const current = m.has(k) ? JSON.parse(m.get(k)).revision : 0;
      if (current !== expected) return false;
      m.set(k, v);
      return true;
    };
  }
  return a;
}
export function adapterRawSet(adapter, k, v) { adapter.raw.set(k, v); }
export function adapterRawHas(adapter, k) { return adapter.raw.has(k); }
export function adapterRawGet(adapter, k) { return adapter.raw.get(k) ?? null; }
export function failingAdapter(name) {
  const fail = async () => { const e = new Error("simulated failure"); e.name = name; throw e; };
  return { get: async () => null, set: fail, delete: fail, list: async () => [] };
}
// A memory adapter with compareAndSet and deleteMany that records what it
// was asked: `cas:<flush>` per compareAndSet, `delete` per delete,
// `deleteMany:<n>` per batch (adapterCalls joins them with commas).
export function recordingAdapter() {
  const a = memoryAdapter(true);
  const cas = a.compareAndSet;
  a.calls = [];
  a.compareAndSet = (k, expected, v, flush) => { a.calls.push(`cas:${flush}`); return cas(k, expected, v); };
  const del = a.delete;
  a.delete = (k) => { a.calls.push("delete"); return del(k); };
  a.deleteMany = async (keys) => { a.calls.push(`deleteMany:${keys.length}`); for (const k of keys) a.raw.delete(k); };
  return a;
}
export function adapterCalls(adapter) { return adapter.calls.join(","); }
// A memory adapter (with compareAndSet) whose reads answer parsed objects
// instead of the strings it was given: a caller's mistake to be refused.
export function objectAnsweringAdapter() {
  const a = memoryAdapter(true);
  a.get = async (k) => (a.raw.has(k) ? JSON.parse(a.raw.get(k)) : null);
  a.list = async (p) => [...a.raw.entries()].filter(([k]) => k.startsWith(p)).map(([k, v]) => [k, JSON.parse(v)]);
  return a;
}
