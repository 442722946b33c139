// IndexedDB, whole transactions per call: the Rust side never holds a
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

// A connection to a namespace's database, as a handle the Rust side keeps:
// `{ name, conn }`. A connection the browser lost (Safari drops them when the
// app has been in the background: "Connection to Indexed Database server
// lost") or closed (another tab upgrading) is opened again, and the
// operation that met it tried once more.
export async function idbOpen(name) {
  const handle = { name, conn: null, lost: false, reopening: null, close() { this.conn?.close(); } };
  handle.conn = await connect(handle);
  return handle;
}

function connect(handle) {
  if (typeof indexedDB === "undefined") {
    // The default storage, absent in Node, Deno, Bun and edge runtimes: say
    // what works there (short: browsers download this line and never show it;
    // the .d.ts names the adapters).
    const e = new Error("IndexedDB (the default storage) is not available in this runtime: pass storage: an adapter (wow-command-client/adapters) or \"memory\"");
    e.name = "NotSupportedError";
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(handle.name, VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      for (const name of ["intents", "effects", "quarantine"]) {
        if (!db.objectStoreNames.contains(name)) db.createObjectStore(name);
      }
    };
    req.onsuccess = () => {
      const db = req.result;
      // Another tab upgrading: let it, and open again on the next call.
      db.onversionchange = () => { db.close(); handle.lost = true; };
      // Closed by the browser (storage cleared, the server connection lost).
      db.onclose = () => { handle.lost = true; };
      handle.lost = false;
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

/** Opens the handle's database again (one opening at a time). */
function reopen(handle) {
  handle.reopening ??= connect(handle).then((conn) => { handle.conn = conn; }).finally(() => { handle.reopening = null; });
  return handle.reopening;
}

// What a lost or closed connection throws when a transaction is made on it.
const lost = (e) => e?.name === "InvalidStateError" || (e?.name === "UnknownError" && /connection/i.test(e.message));

// Writes are strict (resolved only once on disk, where supported) unless the
// caller says the record may settle in the browser's own time ("relaxed").
function tx(handle, stores, mode, durability = "strict") {
  if (handle.lost) {
    const e = new Error("the IndexedDB connection was closed");
    e.name = "InvalidStateError";
    throw e;
  }
  return mode === "readwrite"
    ? handle.conn.transaction(stores, mode, { durability })
    : handle.conn.transaction(stores, mode);
}

/** A transaction, on a connection opened again if the one held was lost. */
async function liveTx(handle, stores, mode, durability) {
  try {
    return tx(handle, stores, mode, durability);
  } catch (e) {
    if (!lost(e)) throw e;
    await reopen(handle);
    return tx(handle, stores, mode, durability);
  }
}

function done(t) {
  return new Promise((resolve, reject) => {
    t.oncomplete = () => resolve();
    t.onerror = () => reject(t.error);
    t.onabort = () => reject(t.error || Object.assign(new Error("transaction aborted"), { name: "AbortError" }));
  });
}

export async function idbGet(db, area, key) {
  const t = await liveTx(db, [area], "readonly");
  const value = await request(t.objectStore(area).get(key));
  return value === undefined ? null : value;
}

// Compare-and-swap, with group commit: up to two readwrite transactions are
// in flight on a connection at once (IndexedDB runs them in the order they
// were made, so the second waits in the database, not in JS, and starts the
// moment the first commits); the writes that fall due while both are in
// flight queue up, and the next transaction carries all of them (each a get,
// a compare and a put, in order, so a later write to the same key sees the
// earlier one; a first write is one `add`). A lone write starts at once,
// also while an earlier one is still committing; a burst of intents costs
// one commit per batch instead of one per write. Returns null on success, or
// the revision found (-1 when absent) when it did not match `expected`. A
// strict (`flush`) write resolves once its batch is committed; a relaxed one
// as soon as its batch's transaction carries it, before its own read and
// put: every later transaction on this connection, a read included, is
// ordered after it. What a relaxed write could still refuse (a conflict with
// another writer, which the intent's lock rules out) goes unreported; the
// record then keeps the other writer's state, and the next drive confirms
// it against history, as after a crash.
const queues = new WeakMap(); // connection handle -> { inFlight, ops: [] }
const IN_FLIGHT = 2;

export function idbCas(db, area, key, expected, value, flush) {
  return new Promise((resolve, reject) => {
    let q = queues.get(db);
    if (!q) queues.set(db, (q = { inFlight: 0, ops: [] }));
    q.ops.push({ area, key, expected, value, flush, resolve, reject });
    if (q.inFlight < IN_FLIGHT) commit(db, q);
  });
}

function commit(db, q) {
  const ops = q.ops;
  q.ops = [];
  q.inFlight++;
  run(db, q, ops, false);
}

function run(db, q, ops, retried) {
  const next = () => {
    q.inFlight--;
    if (q.ops.length) commit(db, q);
  };
  let t;
  try {
    const areas = [...new Set(ops.map((op) => op.area))];
    t = tx(db, areas, "readwrite", ops.some((op) => op.flush) ? "strict" : "relaxed");
  } catch (e) {
    if (!retried && lost(e)) {
      // Nothing of this batch was written: open again, and try it once more.
      reopen(db).then(() => run(db, q, ops, true), (err) => { for (const op of ops) op.reject(err); next(); });
      return;
    }
    for (const op of ops) op.reject(e);
    next();
    return;
  }
  const outcome = new Map(); // op -> null | revision found | its own error
  done(t).then(
    () => { for (const op of ops) if (op.flush || !outcome.has(op)) op.resolve(outcome.get(op) ?? null); },
    (e) => { for (const op of ops) if (op.flush || !outcome.has(op)) op.reject(e); },
  ).finally(next);
  // Writes to different keys go out together; writes to one key run in
  // order, each after the one before it has been put (or refused), so the
  // later one compares against the earlier one's revision.
  const tails = new Map(); // area/key -> callbacks waiting for the last op on it
  for (const op of ops) {
    const slot = `${op.area}/${op.key}`;
    const waiting = tails.get(slot);
    const after = [];
    tails.set(slot, after);
    const finish = () => { for (const f of after) f(); };
    if (waiting) waiting.push(() => casInBatch(t, op, outcome, finish));
    else casInBatch(t, op, outcome, finish);
  }
}

function casInBatch(t, op, outcome, finish) {
  const store = t.objectStore(op.area);
  if (!op.flush) op.resolve(null);
  const refuse = (found) => {
    outcome.set(op, found);
    finish();
  };
  const write = (method) => {
    try {
      return store[method](op.value, op.key);
    } catch (e) {
      // A value the store cannot take (DataCloneError) fails its own write
      // only (a strict one reports it; a relaxed one has answered already).
      outcome.set(op, e);
      op.reject(e);
      finish();
      return null;
    }
  };
  const written = () => {
    outcome.set(op, null);
    finish();
  };
  if (op.expected === 0) {
    // A first write: `add` inserts only where the key is free, in one
    // request (no read before it). A taken key (rare) is refused with the
    // revision found; its error is handled here, so the batch goes on.
    const add = write("add");
    if (!add) return;
    add.onsuccess = written;
    add.onerror = (event) => {
      if (add.error?.name !== "ConstraintError") return; // aborts the batch, as a failed put would
      event.preventDefault();
      event.stopPropagation();
      const taken = store.get(op.key);
      taken.onsuccess = () => refuse(taken.result?.revision ?? 0);
    };
    return;
  }
  const get = store.get(op.key);
  get.onsuccess = () => {
    const current = get.result;
    const found = current === undefined ? -1 : (current.revision ?? 0);
    if (found !== op.expected) {
      refuse(found);
      return;
    }
    const put = write("put");
    if (put) put.onsuccess = written;
  };
}

// How many requests one task of a long read or removal makes: a page's
// values are made (structured-cloned back) in the task its answer comes in,
// and making a request costs the page too, so a journal of 10,000 intents
// is read or pruned in many short tasks, not one long one.
const PAGE = 500;

// Removes `keys` in one transaction, PAGE at a time: the next page is asked
// for when the last of the one before is done (the transaction stays active).
async function idbDelete(db, area, keys) {
  const t = await liveTx(db, [area], "readwrite");
  const finished = done(t);
  const store = t.objectStore(area);
  const from = (at) => {
    let last = null;
    for (const key of keys.slice(at, at + PAGE)) last = store.delete(key);
    if (last && at + PAGE < keys.length) last.onsuccess = () => from(at + PAGE);
  };
  from(0);
  await finished;
}

// Every entry of a store: [[key, value], ...], read in one transaction (one
// consistent view of the store, as a single read was) a page at a time.
async function idbEntries(db, area) {
  const t = await liveTx(db, [area], "readonly");
  const finished = done(t);
  const store = t.objectStore(area), out = [];
  const from = (after) => {
    const range = after === undefined ? null : IDBKeyRange.lowerBound(after, true);
    const keys = store.getAllKeys(range, PAGE), values = store.getAll(range, PAGE);
    values.onsuccess = () => {
      const k = keys.result, v = values.result;
      for (let i = 0; i < k.length; i++) out.push([k[i], v[i]]);
      if (k.length === PAGE) from(k[PAGE - 1]);
    };
  };
  from(undefined);
  await finished;
  return out;
}

// IndexedDB behind the storage-adapter contract, for one namespace, so the
// module drives every store through one Rust implementation. The keys are
// every string store's (`wow-<area>/<namespace>/<id>`, unreadable entries
// under `wow-<area>-quarantine/…`), mapped onto the namespace's database
// as before: an object store per area, records stored as objects (given as
// JSON text, handed back as the objects stored), and `quarantine` keyed
// `<id>` for intents and `<area>/<id>` for the others (its entries
// `{ value, at }`). So tabs on earlier builds read what this one writes.
// compareAndSet is the group-committed `idbCas` (a fourth argument: whether
// the write must be on disk before it resolves); deleteMany is one
// transaction.
export function idbKv(namespace) {
  let opened = null, handle = null;
  // `f` on the connection: once it is open, at once (not async: a write
  // joins the batch of its tick, as a direct idbCas call would).
  const on = (f) => (handle ? f(handle) : (opened ??= idbOpen(`wow-command-client/${namespace}`)
    .then((h) => (handle = h), (e) => { opened = null; throw e; })).then(f));
  const own = `/${namespace}/`;
  // [object store, its key, area, whether aside] of a key (or of a prefix: id "").
  const place = (key) => {
    const m = /^wow-([a-z]+)(-quarantine)?/.exec(key);
    if (!m || !key.startsWith(own, m[0].length)) {
      throw new DOMException(`${key} is not a key of namespace ${namespace}`, "DataError");
    }
    const id = key.slice(m[0].length + own.length);
    return m[2] ? ["quarantine", asideKey(m[1], id), m[1], true] : [m[1], id, m[1], false];
  };
  const parsed = (value) => (typeof value === "string" ? JSON.parse(value) : value);
  return {
    get(key) {
      const [store, id, , aside] = place(key);
      return on((h) => idbGet(h, store, id)).then((value) => (aside && value ? value.value : value));
    },
    set(key, value) {
      const [store, id, , aside] = place(key);
      return on(async (h) => {
        const t = await liveTx(h, [store], "readwrite");
        const finished = done(t);
        t.objectStore(store).put(aside ? { value, at: Date.now() } : parsed(value), id);
        await finished;
      });
    },
    delete(key) {
      return this.deleteMany([key]);
    },
    deleteMany(keys) {
      const places = keys.map(place);
      return on((h) => places.length && idbDelete(h, places[0][0], places.map((p) => p[1])));
    },
    list(prefix) {
      const [store, , area, aside] = place(prefix);
      const mine = area === "intents" ? (k) => !/^[a-z]+\//.test(k) : (k) => k.startsWith(`${area}/`);
      return on((h) => idbEntries(h, store)).then((entries) => (aside
        ? entries.filter(([k]) => mine(k)).map(([k]) => prefix + (area === "intents" ? k : k.slice(area.length + 1)))
        : entries.map(([id, value]) => [prefix + id, value])));
    },
    compareAndSet(key, expected, value, flush) {
      const [store, id] = place(key);
      const record = parsed(value);
      return on((h) => idbCas(h, store, id, expected, record, flush)).then((found) => found === null);
    },
    // The namespace's database, closed and deleted (nothing is left in it).
    async destroy() {
      const name = `wow-command-client/${namespace}`;
      if (opened) (await opened.catch(() => null))?.close();
      opened = null;
      handle = null;
      await idbDeleteDatabase(name);
    },
  };
}

// Moves an unreadable entry aside: intents keep their own key in
// `quarantine`; other areas are prefixed.
function asideKey(area, key) {
  return area === "intents" ? key : `${area}/${key}`;
}

export function idbDeleteDatabase(name) {
  return request(indexedDB.deleteDatabase(name));
}

// Whether the browser keeps this origin's storage under pressure: with `ask`,
// asks for it (`navigator.storage.persist()`), else reads what holds now
// (`persisted()`). Resolves to true, false, or null where there is no
// StorageManager or it threw; never rejects. Firefox answers `persist()` only
// once the user answers its permission prompt, so nothing may wait for it.
export async function storagePersistence(ask) {
  try {
    const manager = globalThis.navigator && globalThis.navigator.storage;
    if (!manager || !manager.persist) return null;
    if (manager.persisted && (await manager.persisted())) return true;
    return ask ? await manager.persist() : false;
  } catch {
    return null;
  }
}
