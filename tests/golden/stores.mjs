// What each store holds, read and written raw (below the package), for the
// golden fixtures: the generator dumps a store after today's build wrote it;
// the check seeds a fresh store with a dump and lets the build under test
// read it. Runs in a page (IndexedDB, localStorage, an adapter) or in a
// runtime without browser storage (an adapter only).
//
// A dump is `{ kind, namespace, ... }`:
//   indexedDB:    { database, version, stores: { <object store>: [[key, value], ...] } }
//   localStorage: { entries: [[key, text], ...] }     (the keys under "wow-")
//   adapter:      { entries: [[key, text], ...] }     (everything the adapter holds)

/** The kinds of store a fixture is written for, by file name. */
export const kinds = { indexedDB: "indexed-db", localStorage: "local-storage", adapter: "adapter" };

/**
 * A caller's adapter as the README shows one (compareAndSet included), over
 * a Map of key to text: what a KV store at the edge holds.
 */
export function mapAdapter(map = new Map()) {
  const revision = (text) => (text == null ? 0 : JSON.parse(text).revision);
  return {
    map,
    async get(key) { return map.has(key) ? map.get(key) : null; },
    async set(key, value) { map.set(key, value); },
    async delete(key) { map.delete(key); },
    async list(prefix) { return [...map].filter(([key]) => key.startsWith(prefix)); },
    async compareAndSet(key, expected, value) {
      if (revision(map.get(key)) !== expected) return false;
      map.set(key, value);
      return true;
    },
  };
}

const request = (req) => new Promise((resolve, reject) => {
  req.onsuccess = () => resolve(req.result);
  req.onerror = () => reject(req.error);
});

/** The IndexedDB database of `namespace`, by the name every build has used. */
export const databaseOf = (namespace) => `wow-command-client/${namespace}`;

/** Everything a namespace's store holds now. */
export async function dump(kind, namespace, adapter) {
  if (kind === "adapter") return { kind, namespace, entries: [...adapter.map].sort(byKey) };
  if (kind === "localStorage") {
    const entries = [];
    for (let i = 0; i < localStorage.length; i++) {
      const key = localStorage.key(i);
      if (key.startsWith("wow-")) entries.push([key, localStorage.getItem(key)]);
    }
    return { kind, namespace, entries: entries.sort(byKey) };
  }
  const db = await request(indexedDB.open(databaseOf(namespace)));
  try {
    const stores = {};
    for (const name of [...db.objectStoreNames].sort()) {
      const store = db.transaction([name], "readonly").objectStore(name);
      const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())]);
      stores[name] = keys.map((k, i) => [k, values[i]]);
    }
    return { kind, namespace, database: db.name, version: db.version, stores };
  } finally {
    db.close();
  }
}

/** Fills an empty store with a dump; resolves to the adapter for `adapter` dumps. */
export async function seed(fixture) {
  if (fixture.kind === "adapter") return mapAdapter(new Map(fixture.entries));
  if (fixture.kind === "localStorage") {
    for (const [key, text] of fixture.entries) localStorage.setItem(key, text);
    return undefined;
  }
  await request(indexedDB.deleteDatabase(fixture.database));
  const open = indexedDB.open(fixture.database, fixture.version);
  open.onupgradeneeded = () => {
    for (const name of Object.keys(fixture.stores)) open.result.createObjectStore(name);
  };
  const db = await request(open);
  try {
    const names = Object.keys(fixture.stores);
    const t = db.transaction(names, "readwrite");
    for (const name of names) for (const [key, value] of fixture.stores[name]) t.objectStore(name).put(value, key);
    await new Promise((resolve, reject) => { t.oncomplete = resolve; t.onerror = () => reject(t.error); });
  } finally {
    db.close();
  }
  return undefined;
}

/** Writes one raw entry the way `kind` holds it: `value` is text, or for IndexedDB an object store's value. */
export async function putRaw(kind, namespace, adapter, { key, store, id, value }) {
  if (kind === "adapter") return void adapter.map.set(key, value);
  if (kind === "localStorage") return void localStorage.setItem(key, value);
  const db = await request(indexedDB.open(databaseOf(namespace)));
  try {
    const t = db.transaction([store], "readwrite");
    t.objectStore(store).put(value, id);
    await new Promise((resolve, reject) => { t.oncomplete = resolve; t.onerror = () => reject(t.error); });
  } finally {
    db.close();
  }
}

/** The raw value of one entry, as `putRaw` names it (null when absent). */
export async function getRaw(kind, namespace, adapter, { key, store, id }) {
  if (kind === "adapter") return adapter.map.get(key) ?? null;
  if (kind === "localStorage") return localStorage.getItem(key);
  const db = await request(indexedDB.open(databaseOf(namespace)));
  try {
    const value = await request(db.transaction([store], "readonly").objectStore(store).get(id));
    return value ?? null;
  } finally {
    db.close();
  }
}

function byKey([a], [b]) {
  return a < b ? -1 : a > b ? 1 : 0;
}
