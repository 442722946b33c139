// Storage adapters for runtimes without IndexedDB or localStorage. Each is
// the StorageAdapter contract: get/set/delete/list, and compareAndSet where
// the store can swap atomically. See docs/edge.md for what each guarantees.

/** Reads the revision out of a stored record's JSON: 0 when absent, -1 when unreadable (it matches no expected revision). */
export function storedRevision(text) {
  if (text == null) return 0;
  try {
    const revision = JSON.parse(text).revision;
    return Number.isSafeInteger(revision) ? revision : -1;
  } catch {
    return -1;
  }
}

/**
 * Cloudflare Workers KV. KV has no compare-and-swap and is eventually
 * consistent across locations (a read elsewhere can be ~60 s stale): keep
 * one driver per intent (one worker invocation resumes at a time), and let
 * confirmation, not the journal, decide what the gateway holds.
 */
export function kvAdapter(kv) {
  return {
    get: (key) => kv.get(key),
    set: (key, value) => kv.put(key, value),
    delete: (key) => kv.delete(key),
    async list(prefix) {
      const keys = [];
      let cursor;
      do {
        const page = await kv.list({ prefix, cursor });
        for (const k of page.keys) keys.push(k.name);
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor);
      return keys;
    },
  };
}

/**
 * A Durable Object's transactional storage: strongly consistent, and
 * compareAndSet runs in one transaction, so two invocations racing on one
 * intent cannot both win.
 */
export function durableObjectAdapter(storage) {
  return {
    get: async (key) => (await storage.get(key)) ?? null,
    set: (key, value) => storage.put(key, value),
    delete: (key) => storage.delete(key),
    async list(prefix) {
      const found = await storage.list({ prefix });
      return [...found.entries()];
    },
    compareAndSet: (key, expected, value) =>
      storage.transaction(async (txn) => {
        const current = await txn.get(key);
        const found = current === undefined ? 0 : storedRevision(current);
        if (found !== expected) return false;
        await txn.put(key, value);
        return true;
      }),
  };
}

/**
 * Deno KV (`await Deno.openKv()`, or Deno Deploy's): strongly consistent,
 * and compareAndSet is an atomic commit checked against the entry's
 * versionstamp, so isolates and processes sharing the store cannot both
 * win: an idempotent consumer excludes across them. Keys go under `prefix`
 * (default `["wow-command-client"]`). A Deno KV value holds at most 64 KiB:
 * keep `maxBodyChars` well below that.
 */
export function denoKvAdapter(kv, { prefix = ["wow-command-client"] } = {}) {
  const at = (key) => [...prefix, key];
  return {
    get: (key) => busyRetried(async () => (await kv.get(at(key))).value ?? null),
    set: (key, value) => busyRetried(async () => { await kv.set(at(key), value); }),
    delete: (key) => busyRetried(() => kv.delete(at(key))),
    list: (start) => busyRetried(async () => {
      const found = [];
      for await (const entry of kv.list({ start: at(start), end: at(`${start}\uffff`) })) {
        found.push([entry.key[entry.key.length - 1], entry.value]);
      }
      return found;
    }),
    compareAndSet: (key, expected, value) => busyRetried(async () => {
      // A commit refused because the entry changed after it was read is
      // compared again: the swap fails only when the revision differs.
      for (;;) {
        const current = await kv.get(at(key));
        if ((current.value == null ? 0 : storedRevision(current.value)) !== expected) return false;
        if ((await kv.atomic().check(current).set(at(key), value).commit()).ok) return true;
      }
    }),
  };
}

// A local Deno KV file shared by processes answers "database is locked"
// while another process writes: that operation is tried again, a few times
// over about a second, before its error stands.
async function busyRetried(operation) {
  for (let pause = 5; ; pause *= 2) {
    try {
      return await operation();
    } catch (e) {
      if (pause > 640 || !/database is locked/i.test(String(e?.message))) throw e;
      await new Promise((r) => setTimeout(r, pause * (0.5 + Math.random())));
    }
  }
}

/** In memory, with compareAndSet (tests, short-lived scripts): lost on exit. */
export function memoryAdapter(map = new Map()) {
  return {
    get: (key) => map.get(key) ?? null,
    set: (key, value) => void map.set(key, value),
    delete: (key) => void map.delete(key),
    list: (prefix) => [...map].filter(([k]) => k.startsWith(prefix)),
    compareAndSet(key, expected, value) {
      if (storedRevision(map.get(key)) !== expected) return false;
      map.set(key, value);
      return true;
    },
  };
}
