// The built-in string stores, localStorage and memory, as objects of the
// storage-adapter contract, so one implementation of compare-and-swap,
// listing and quarantine (src/web/storage/store.js) serves them and callers'
// adapters alike. Each compareAndSet runs synchronously, so
// nothing in the same tab or process runs between its read and its write.

function revisionOf(text) {
  if (text == null) return 0;
  try {
    const revision = JSON.parse(text).revision;
    return Number.isSafeInteger(revision) ? revision : -1;
  } catch {
    return -1;
  }
}

// window.localStorage; null where there is none (workers, edge runtimes).
// Reading it throws SecurityError where the browser blocks storage.
export function localStorageKv() {
  const raw = globalThis.localStorage;
  if (!raw) return null;
  return {
    get: (key) => raw.getItem(key),
    set: (key, value) => raw.setItem(key, value),
    delete: (key) => raw.removeItem(key),
    // Every [key, value] under `prefix`, in one pass: the keys at once
    // (Firefox answers `key(i)` one by one many times slower), each value
    // read here rather than awaited one by one by the store (a long task on
    // a full quota). The journal's keys never name a Storage method, so each
    // is an own property of the Storage object.
    list: (prefix) => Object.keys(raw).filter((key) => key.startsWith(prefix)).map((key) => [key, raw.getItem(key)]),
    compareAndSet(key, expected, value) {
      if (revisionOf(raw.getItem(key)) !== expected) return false;
      raw.setItem(key, value);
      return true;
    },
  };
}

// A Map, for `storage: "memory"`: lost with the page or process.
export function memoryKv() {
  const map = new Map();
  return {
    get: (key) => map.get(key) ?? null,
    set: (key, value) => void map.set(key, value),
    delete: (key) => void map.delete(key),
    list: (prefix) => [...map].filter(([key]) => key.startsWith(prefix)),
    compareAndSet(key, expected, value) {
      if (revisionOf(map.get(key)) !== expected) return false;
      map.set(key, value);
      return true;
    },
  };
}
