// IndexedDB, one whole transaction per call: the Rust side never holds a
// transaction across an await (that would end in TransactionInactiveError).
// One database per namespace; object stores `intents` and `quarantine`.

const VERSION = 1;

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

export function idbOpen(name) {
  if (typeof indexedDB === "undefined") {
    const e = new Error("IndexedDB is not available in this runtime");
    e.name = "NotSupportedError";
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(name, VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains("intents")) db.createObjectStore("intents");
      if (!db.objectStoreNames.contains("quarantine")) db.createObjectStore("quarantine");
    };
    req.onsuccess = () => {
      const db = req.result;
      // Another tab upgrading: let it, and open again on the next call.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    req.onerror = () => reject(req.error);
    req.onblocked = () => {
      const e = new Error("IndexedDB open is blocked by another connection");
      e.name = "InvalidStateError";
      reject(e);
    };
  });
}

function tx(db, stores, mode) {
  // Strict durability: resolve only once the write is on disk, where supported.
  return mode === "readwrite"
    ? db.transaction(stores, mode, { durability: "strict" })
    : db.transaction(stores, mode);
}

function done(t) {
  return new Promise((resolve, reject) => {
    t.oncomplete = () => resolve();
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || Object.assign(new Error("transaction aborted"), { name: "AbortError" }));
  });
}

export async function idbGet(db, key) {
  const t = tx(db, ["intents"], "readonly");
  const value = await request(t.objectStore("intents").get(key));
  return value === undefined ? null : value;
}

// Compare-and-swap inside one transaction: returns null on success, or the
// revision found (-1 when absent) when it did not match `expected`.
export async function idbCas(db, key, expected, value) {
  const t = tx(db, ["intents"], "readwrite");
  const store = t.objectStore("intents");
  const finished = done(t);
  const current = await request(store.get(key));
  const found = current === undefined ? -1 : (current.revision ?? 0);
  if ((expected === 0 && found !== -1) || (expected !== 0 && found !== expected)) {
    t.abort();
    await finished.catch(() => {});
    return found;
  }
  store.put(value, key);
  await finished;
  return null;
}

export async function idbDelete(db, key) {
  const t = tx(db, ["intents"], "readwrite");
  const finished = done(t);
  t.objectStore("intents").delete(key);
  await finished;
}

// Every entry: [[key, value], ...].
export async function idbEntries(db) {
  const t = tx(db, ["intents"], "readonly");
  const store = t.objectStore("intents");
  const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())]);
  return keys.map((k, i) => [k, values[i]]);
}

// Moves an unreadable entry aside, in one transaction.
export async function idbQuarantine(db, key, value, reason) {
  const t = tx(db, ["intents", "quarantine"], "readwrite");
  const finished = done(t);
  t.objectStore("quarantine").put({ value, reason, at: Date.now() }, key);
  t.objectStore("intents").delete(key);
  await finished;
}

export async function idbQuarantineKeys(db) {
  const t = tx(db, ["quarantine"], "readonly");
  return request(t.objectStore("quarantine").getAllKeys());
}

export function idbDeleteDatabase(name) {
  return request(indexedDB.deleteDatabase(name));
}

// Asks the browser to keep this origin's storage under pressure. Resolves to
// true (granted), false (refused) or null (no StorageManager here).
export async function storagePersist() {
  const manager = globalThis.navigator && globalThis.navigator.storage;
  if (!manager || !manager.persist) return null;
  if (manager.persisted && (await manager.persisted())) return true;
  return manager.persist();
}
