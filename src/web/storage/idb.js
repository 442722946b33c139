// IndexedDB, one whole transaction per call: the Rust side never holds a
// transaction across an await (that would end in TransactionInactiveError).
// One database per namespace; object stores `intents` (the command client's
// journal), `effects` (idempotent consumers) and `quarantine` (unreadable
// entries of either, effects under an `effects/` key prefix).

const VERSION = 2;

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
      for (const name of ["intents", "effects", "quarantine"]) {
        if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
      }
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

// Writes are strict (resolved only once on disk, where supported) unless the
// caller says the record may settle in the browser's own time ("relaxed").
function tx(db, stores, mode, durability = "strict") {
  return mode === "readwrite"
    ? db.transaction(stores, mode, { durability })
    : db.transaction(stores, mode);
}

function done(t) {
  return new Promise((resolve, reject) => {
    t.oncomplete = () => resolve();
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || Object.assign(new Error("transaction aborted"), { name: "AbortError" }));
  });
}

export async function idbGet(db, area, key) {
  const t = tx(db, [area], "readonly");
  const value = await request(t.objectStore(area).get(key));
  return value === undefined ? null : value;
}

// Compare-and-swap inside one transaction: returns null on success, or the
// revision found (-1 when absent) when it did not match `expected`. A strict
// (`flush`) write resolves once committed, a relaxed one once queued.
export async function idbCas(db, area, key, expected, value, flush) {
  const t = tx(db, [area], "readwrite", flush ? "strict" : "relaxed");
  const store = t.objectStore(area);
  const finished = done(t);
  const current = await request(store.get(key));
  const found = current === undefined ? -1 : (current.revision ?? 0);
  if ((expected === 0 && found !== -1) || (expected !== 0 && found !== expected)) {
    t.abort();
    await finished.catch(() => {});
    return found;
  }
  store.put(value, key);
  // A relaxed write resolves once it is queued: a later transaction on this
  // store sees it (IndexedDB orders them), and losing it to a crash loses
  // only bookkeeping the caller said may settle in the browser's own time.
  if (flush) await finished;
  else finished.catch(() => {});
  return null;
}

export async function idbDelete(db, area, key) {
  const t = tx(db, [area], "readwrite");
  const finished = done(t);
  t.objectStore(area).delete(key);
  await finished;
}

export async function idbDeleteMany(db, area, keys) {
  const t = tx(db, [area], "readwrite");
  const finished = done(t);
  const store = t.objectStore(area);
  for (const key of keys) store.delete(key);
  await finished;
}

// Every entry: [[key, value], ...].
export async function idbEntries(db, area) {
  const t = tx(db, [area], "readonly");
  const store = t.objectStore(area);
  const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())]);
  return keys.map((k, i) => [k, values[i]]);
}

// Moves an unreadable entry aside, in one transaction.
// Intents keep their own key in `quarantine`; other areas are prefixed.
function asideKey(area, key) {
  return area === "intents" ? key : `${area}/${key}`;
}

export async function idbQuarantine(db, area, key, value, reason) {
  const t = tx(db, [area, "quarantine"], "readwrite");
  const finished = done(t);
  t.objectStore("quarantine").put({ value, reason, at: Date.now() }, asideKey(area, key));
  t.objectStore(area).delete(key);
  await finished;
}

// The keys (without the area prefix) quarantined from one area.
export async function idbQuarantineKeys(db, area) {
  const t = tx(db, ["quarantine"], "readonly");
  const keys = await request(t.objectStore("quarantine").getAllKeys());
  if (area === "intents") return keys.filter((k) => !/^[a-z]+\//.test(k));
  return keys.filter((k) => k.startsWith(`${area}/`)).map((k) => k.slice(area.length + 1));
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
