// The in-page workloads of `npm run bench`: each returns raw timings and the
// driver (bench/run.mjs) prints the figures and ratios side by side.
import init, { WowClient } from "/pkg/index.js";
import { memoryAdapter } from "/pkg/adapters.js";
import { set as idbSet, createStore } from "idb-keyval";
import { v4 as uuidv4 } from "uuid";
import { fetchEventSource } from "@microsoft/fetch-event-source";
import { orderBody } from "./order.mjs";

const wasm = await init();
const base = location.origin;
const now = () => performance.timeOrigin + performance.now();
const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

async function connect(storage, namespace = unique("bench")) {
  return WowClient.connect({ user: null, baseUrl: base, storage, namespace, timeoutMs: 30_000, waitStage: "PROCESSED" });
}

async function account(balance = 1e12) {
  const id = unique("acct");
  const client = await connect("memory");
  await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account", create: true,
    body: { name: id, balance } });
  return id;
}

const lock = (id) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } });

/** The request the SDK sends for a command, captured at `fetch`, with the gateway's answer to it (`answer`). */
async function captureRequest(command) {
  const client = await connect("memory");
  const original = globalThis.fetch;
  let captured;
  globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    if (captured) return original(request);
    captured = { url: request.url, method: request.method, headers: [...request.headers], body: await request.clone().text() };
    const response = await original(request);
    captured.answer = { status: response.status, headers: [...response.headers], text: await response.clone().text() };
    return response;
  };
  try { await client.sendAndWait(command); } finally { globalThis.fetch = original; }
  return captured;
}

/** The captured request sent again by raw fetch, with a fresh requestId: its answer, parsed. */
function rawFetch(template, url = template.url, body = template.body) {
  const headers = new Map(template.headers);
  headers.set("command-request-id", crypto.randomUUID());
  return fetch(url, { method: template.method, headers: [...headers], body }).then((r) => r.json());
}

async function timeEach(n, fn) {
  const times = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn(i);
    times[i] = performance.now() - t0;
  }
  return Array.from(times);
}

/**
 * The simplest hand-written client with the SDK's guarantees: a Web Lock
 * per intent (one driver across tabs), the intent written before its send
 * (IndexedDB: with strict durability, the writes that fall due together in
 * one transaction, group commit), the outcome written after (relaxed), and
 * each state announced on a BroadcastChannel. No retries, no confirmation,
 * no input checks: a floor for what those guarantees cost the browser. The
 * options leave one guarantee out at a time (`--guarantees`).
 */
async function guardedPeer(namespace, { storage = "indexedDB", lock = true, announce = true, first = "strict", after = true } = {}) {
  const channel = new BroadcastChannel(`peer/${namespace}`);
  if (storage === "localStorage") {
    const write = async (_, key, value) => localStorage.setItem(`peer/${namespace}/${key}`, JSON.stringify(value));
    return peerClient(namespace, channel, write, { lock, announce, first, after }, () => channel.close());
  }
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open(`peer/${namespace}`);
    open.onupgradeneeded = () => open.result.createObjectStore("intents");
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  // Group commit: while a transaction is in flight, the writes that fall due
  // wait, and the next transaction carries all of them.
  let queue = [], inFlight = false;
  const flush = () => {
    if (inFlight || queue.length === 0) return;
    const batch = queue;
    queue = [];
    inFlight = true;
    const strict = batch.some((w) => w.durability === "strict");
    const t = db.transaction("intents", "readwrite", { durability: strict ? "strict" : "relaxed" });
    const store = t.objectStore("intents");
    for (const w of batch) store.put(w.value, w.key);
    const done = (f) => () => { inFlight = false; batch.forEach(f); flush(); };
    t.oncomplete = done((w) => w.resolve());
    t.onabort = done((w) => w.reject(t.error));
  };
  const write = (durability, key, value) => new Promise((resolve, reject) => {
    queue.push({ durability, key, value, resolve, reject });
    flush();
  });
  return peerClient(namespace, channel, write, { lock, announce, first, after }, () => { channel.close(); db.close(); });
}

function peerClient(namespace, channel, write, { lock, announce, first, after }, close) {
  const send = (template, url = template.url) => {
    const requestId = crypto.randomUUID();
    const drive = async () => {
      const intent = { requestId, url, body: template.body, state: "pending", at: Date.now() };
      await write(first, requestId, intent);
      if (announce) channel.postMessage({ intentId: requestId, state: "pending", revision: 1 });
      const headers = new Map(template.headers);
      headers.set("command-request-id", requestId);
      const result = await (await fetch(url, { method: template.method, headers: [...headers], body: template.body })).json();
      const state = result.errorCode === "Ok" ? "succeeded" : "failed";
      if (after) await write("relaxed", requestId, { ...intent, state, result });
      if (announce) channel.postMessage({ intentId: requestId, state, revision: 2 });
      return result;
    };
    return lock ? navigator.locks.request(`peer/${namespace}/${requestId}`, drive) : drive();
  };
  return { send, close };
}

/** 2. Per-command overhead: SDK (IndexedDB, localStorage) vs raw fetch vs a JS peer. */
export async function overhead(n) {
  const id = await account();
  const template = await captureRequest(lock(id));
  const headers = new Map(template.headers);
  const rawSend = async () => {
    headers.set("command-request-id", crypto.randomUUID());
    const r = await fetch(template.url, { method: template.method, headers: [...headers], body: template.body });
    const result = await r.json();
    if (!result.succeeded && result.errorCode !== "Ok") throw new Error(result.errorCode);
  };
  const peerStore = createStore(unique("peer"), "intents");
  const peerSend = async () => {
    // A careful hand-written client: a requestId persisted before sending.
    const requestId = uuidv4();
    const intent = { requestId, url: template.url, body: template.body, state: "sending", at: Date.now() };
    await idbSet(requestId, intent, peerStore);
    headers.set("command-request-id", requestId);
    const r = await fetch(template.url, { method: template.method, headers: [...headers], body: template.body });
    const result = await r.json();
    const ok = result.succeeded ?? result.errorCode === "Ok";
    await idbSet(requestId, { ...intent, state: ok ? "succeeded" : "failed", result }, peerStore);
    if (!ok) throw new Error(result.errorCode);
  };
  const guardedIdb = await guardedPeer(unique("peer"));
  const guardedLocal = await guardedPeer(unique("peer"), { storage: "localStorage" });
  const guarded = (peer) => async () => {
    const result = await peer.send(template);
    if (result.errorCode !== "Ok") throw new Error(result.errorCode);
  };
  const idb = await connect("indexedDB");
  const local = await connect("localStorage");
  const warm = 50;
  const runs = { raw: rawSend, peer: peerSend, guardedIndexedDB: guarded(guardedIdb), guardedLocalStorage: guarded(guardedLocal),
    sdkIndexedDB: () => idb.sendAndWait(lock(id)), sdkLocalStorage: () => local.sendAndWait(lock(id)) };
  for (const fn of Object.values(runs)) for (let i = 0; i < warm; i++) await fn();
  // Interleaved in rounds of 50 so drift in the gateway or the machine hits all alike.
  const times = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let done = 0; done < n; done += 50) {
    for (const [name, fn] of Object.entries(runs)) times[name].push(...await timeEach(Math.min(50, n - done), fn));
  }
  const phases = await phasesOf(runs, Math.max(50, n >> 2));
  await local.clear();
  await idb.clear();
  guardedIdb.close();
  guardedLocal.close();
  return { ...times, phases };
}

/**
 * Where each variant's time goes, in a separate pass (fetch is wrapped to
 * stamp its call and its answer, which the timed rounds must not pay for):
 * before the request leaves, from fetch to the response headers, and from
 * the headers to the caller holding the result. Medians, interleaved.
 */
async function phasesOf(runs, n) {
  const original = globalThis.fetch;
  let called = 0, answered = 0;
  globalThis.fetch = (...args) => {
    called = performance.now();
    const response = original(...args);
    response.then(() => { answered = performance.now(); }, () => {});
    return response;
  };
  const seen = Object.fromEntries(Object.keys(runs).map((k) => [k, { before: [], inFlight: [], after: [] }]));
  try {
    for (let done = 0; done < n; done += 25) {
      for (const [name, fn] of Object.entries(runs)) {
        for (let i = 0; i < Math.min(25, n - done); i++) {
          const t0 = performance.now();
          await fn();
          const t3 = performance.now();
          seen[name].before.push(called - t0);
          seen[name].inFlight.push(answered - called);
          seen[name].after.push(t3 - answered);
        }
      }
    }
  } finally {
    globalThis.fetch = original;
  }
  return seen;
}

/**
 * 3. Stage latency: from a chunk's arrival at JS (timestamped where the
 * response body is read) to the caller holding the element it completed,
 * for the SDK, a raw stream reader and the peer (fetch-event-source).
 */
export async function stages(n, gapMs) {
  const id = await account();
  const command = { ...lock(id), waitStage: "SNAPSHOT" };
  const sdk = await connect("memory");
  const template = await captureRequest(command);
  const headers = new Map(template.headers);
  headers.set("accept", "text/event-stream");
  const original = globalThis.fetch;
  let arrivals = [];
  // Every response body passes a transform that notes when each chunk arrives.
  const timedFetch = async (input, init) => {
    const r = await original(input, init);
    const stamp = new TransformStream({ transform(chunk, c) { arrivals.push(now()); c.enqueue(chunk); } });
    return new Response(r.body.pipeThrough(stamp), { status: r.status, statusText: r.statusText, headers: r.headers });
  };
  const stats = {};
  const record = (name, seen) => {
    const s = (stats[name] ??= { latency: [], elements: 0, early: 0, chunks: 0 });
    const last = arrivals.at(-1);
    for (const t of seen) {
      const arrival = arrivals.filter((a) => a <= t).at(-1) ?? t;
      s.latency.push(t - arrival);
      s.elements += 1;
      if (last - t > gapMs / 2) s.early += 1;
    }
    s.chunks += arrivals.length;
  };
  globalThis.fetch = timedFetch;
  try {
    for (let i = 0; i < n; i++) {
      arrivals = [];
      let seen = [];
      for await (const _ of sdk.sendAndWaitStream(command)) seen.push(now());
      record("sdk", seen);

      arrivals = [];
      seen = [];
      headers.set("command-request-id", crypto.randomUUID());
      const r = await timedFetch(template.url, { method: template.method, headers: [...headers], body: template.body });
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (frame.includes("data:")) { JSON.parse(frame.slice(frame.indexOf("data:") + 5)); seen.push(now()); }
        }
      }
      record("raw", seen);

      arrivals = [];
      seen = [];
      headers.set("command-request-id", crypto.randomUUID());
      await fetchEventSource(template.url, {
        method: template.method, headers: Object.fromEntries(headers), body: template.body, openWhenHidden: true,
        fetch: timedFetch,
        onmessage: (ev) => { if (ev.data) { JSON.parse(ev.data); seen.push(now()); } },
        onclose: () => {}, onerror: (e) => { throw e; },
      });
      record("peer", seen);
    }
  } finally {
    globalThis.fetch = original;
  }
  return stats;
}

/** 4. Concurrency: `n` commands in flight at once. */
const accounts = () => Promise.all(Array.from({ length: 10 }, () => account()));
const toAccount = (url, id) => url.replace(/account\/[^/]+/, `account/${id}`);

/** One burst of `n` commands over 10 fresh accounts (a burst on accounts an
 * earlier burst grew would pay the gateway's longer folds): its wall time
 * and how many succeeded. `variant` is "raw", "sdk", or a guarded peer's
 * options (see `guardedPeer`). */
async function burst(n, variant, template) {
  const ids = await accounts();
  let send, done = () => {};
  if (variant === "raw") {
    send = (i) => rawFetch(template, toAccount(template.url, ids[i % 10])).then((r) => r.errorCode === "Ok");
  } else if (variant === "sdk") {
    const sdk = await connect("indexedDB");
    send = (i) => sdk.send(lock(ids[i % 10])).then((o) => o.status === "succeeded");
    // Emptied later, by `cleanup()`: the peer deletes nothing, so neither does a measured burst.
    done = () => { untidy.push(async () => { await sdk.clear(); sdk.free(); }); };
  } else {
    const peer = await guardedPeer(unique("burst"), variant);
    send = (i) => peer.send(template, toAccount(template.url, ids[i % 10])).then((r) => r.errorCode === "Ok");
    done = () => peer.close();
  }
  const t0 = performance.now();
  const ok = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
  const ms = performance.now() - t0;
  await done();
  return { ms, succeeded: ok.filter(Boolean).length };
}

/** What measured bursts left to empty (the SDK's journals), emptied by `cleanup()` outside any measurement. */
const untidy = [];
export async function cleanup() {
  for (const f of untidy.splice(0)) await f();
}

/** Bursts of every variant in `variants` (name → "raw", "sdk" or peer
 * options), `rounds` times, the order rotated each round. */
export async function concurrency(n, variants, rounds = 3) {
  const template = await captureRequest(lock((await accounts())[0]));
  const names = Object.keys(variants), out = Object.fromEntries(names.map((k) => [k, []]));
  for (let round = 0; round < rounds; round++) {
    const k = round % names.length;
    for (const name of [...names.slice(k), ...names.slice(0, k)]) out[name].push(await burst(n, variants[name], template));
  }
  return out;
}

/**
 * 4c. What a body's size costs: a body of about `bytes` of JSON (an order of
 * items of about 100 B each, the shape a document or a cart import has),
 * sent one command after another. `bodySetup` makes the account, the
 * clients and the body; `bodyRun` sends `n` by one variant, so the driver
 * can measure the main thread around the sends alone. Each variant turns the
 * caller's object into its request: raw fetch and the peer by
 * `JSON.stringify`, the SDK by its own path.
 */
let bodyBench = null;
export async function bodySetup(bytes) {
  await bodyTeardown();
  const id = await account();
  const command = { aggregate: { resource: "account", id }, action: "lock_amount", body: orderBody(bytes) };
  const template = await captureRequest(lock(id));
  bodyBench = { command, template, bytes: JSON.stringify(command.body).length, sdk: await connect("indexedDB"),
    peer: await guardedPeer(unique("body")) };
  return bodyBench.bytes;
}
export async function bodyRun(variant, n) {
  const { command, template, sdk, peer } = bodyBench;
  for (let i = 0; i < n; i++) {
    let ok;
    if (variant === "raw") {
      ok = (await rawFetch(template, template.url, JSON.stringify(command.body))).errorCode === "Ok";
    } else if (variant === "peer") {
      ok = (await peer.send({ ...template, body: JSON.stringify(command.body) })).errorCode === "Ok";
    } else {
      ok = (await sdk.sendAndWait(command)).errorCode === "Ok";
    }
    if (!ok) throw new Error(`${variant}: a ${bodyBench.bytes} B body did not succeed`);
  }
}
export async function bodyTeardown() {
  if (!bodyBench) return;
  await bodyBench.sdk.clear();
  bodyBench.sdk.free();
  bodyBench.peer.close();
  bodyBench = null;
}

/** 4d. `n` intents in one scope, fired at once and sent one after another in
 * the order written, against the same `n` sent one after another by hand
 * (raw fetch awaiting each) and by the SDK awaiting each: wall time (ms). */
export async function scoped(n) {
  const id = await account();
  const template = await captureRequest(lock(id));
  const sdk = await connect("indexedDB");
  const t = {};
  let t0 = performance.now();
  for (let i = 0; i < n; i++) if ((await rawFetch(template)).errorCode !== "Ok") throw new Error("raw fetch failed");
  t.raw = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < n; i++) await sdk.sendAndWait(lock(id));
  t.awaited = performance.now() - t0;
  const scope = unique("scope");
  t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: n }, () => sdk.send({ ...lock(id), scope })));
  t.scoped = performance.now() - t0;
  const records = (await sdk.intents()).filter((r) => r.scope === scope).sort((a, b) => a.scopeSeq - b.scopeSeq);
  const sent = records.map((r) => r.attempts[0]?.sentAt ?? Infinity);
  t.inOrder = sent.every((at, i) => i === 0 || at >= sent[i - 1]);
  t.succeeded = outcomes.filter((o) => o.status === "succeeded").length;
  await sdk.clear();
  sdk.free();
  return t;
}

/** 4b. One page's share of a burst from pages sharing one journal: accounts
 * to create (`ids` null) or to use, the journal's namespace, and the moment
 * (epoch ms) every page starts at. */
export async function sharedBurst(n, namespace, ids, startAt) {
  ids ??= await Promise.all(Array.from({ length: 10 }, () => account()));
  const sdk = await connect("indexedDB", namespace);
  await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
  const t0 = Date.now();
  const outcomes = await Promise.all(Array.from({ length: n }, (_, i) => sdk.send(lock(ids[i % ids.length]))));
  return { ids, n, succeeded: outcomes.filter((o) => o.status === "succeeded").length, startedAt: t0, endedAt: Date.now() };
}

/** 5. Journal scale: `n` persisted intents in IndexedDB (copies of a real record). */
export async function journalScale(n) {
  const namespace = unique("scale");
  const client = await connect("indexedDB", namespace);
  const id = await account();
  await client.send(lock(id));
  const [template] = await client.intents();
  const estimate = async () => (await navigator.storage.estimate()).usage ?? 0;
  const before = await estimate();
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open(`wow-command-client/${namespace}`);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const old = Date.now() - 30 * 86_400_000;
  let bytes = 0;
  for (let done = 0; done < n; done += 1000) {
    const t = db.transaction(["intents"], "readwrite");
    for (let i = done; i < Math.min(n, done + 1000); i++) {
      const intentId = crypto.randomUUID();
      // One in a hundred unresolved; the settled rest a month old.
      const unresolved = i % 100 === 0;
      const record = { ...template, intentId, requestId: intentId, state: unresolved ? "unknown" : "succeeded",
        createdAt: old, updatedAt: old, revision: 1 };
      bytes += JSON.stringify(record).length;
      t.objectStore("intents").put(record, intentId);
    }
    await new Promise((resolve, reject) => { t.oncomplete = resolve; t.onerror = () => reject(t.error); });
  }
  db.close();
  const after = await estimate();
  // The scan resume() does: every record read and decoded, the unresolved picked.
  const t0 = performance.now();
  const listed = await client.intents();
  const scanMs = performance.now() - t0;
  const t1 = performance.now();
  const pruned = await client.prune();
  const pruneMs = performance.now() - t1;
  const left = (await client.intents()).length;
  await client.clear();
  return { n, listed: listed.length, scanMs, pruned, pruneMs, left, jsonBytesPerIntent: bytes / n,
    storedBytesPerIntent: (after - before) / n };
}

/** 6. Memory: JS heap and wasm memory across `n` commands. */
export async function memory(n, sample = window.forceGC) {
  const ids = await Promise.all(Array.from({ length: 10 }, () => account()));
  const client = await connect("indexedDB");
  const points = [];
  const measure = async (done) => {
    await client.clear();
    // The driver forces a GC through the DevTools protocol and reads the heap.
    const heapBytes = await sample();
    points.push({ done, wasmBytes: wasm.memory.buffer.byteLength, heapBytes });
  };
  await measure(0);
  for (let done = 0; done < n; ) {
    const batch = Math.min(n - done, n / 10);
    await Promise.all(Array.from({ length: 10 }, async (_, k) => {
      for (let i = k; i < batch; i += 10) await client.sendAndWait(lock(ids[k]));
    }));
    done += batch;
    await measure(done);
  }
  return points;
}

/**
 * The journal's footprint per intent, from what the SDK itself writes: an
 * adapter that keeps every value set, so the record as persisted before its
 * send (unresolved) and as settled are measured exactly, as JSON text (what
 * localStorage and adapters store; IndexedDB stores the same object).
 */
export async function footprint(n) {
  const id = await account();
  const measure = async (label, command, options = {}) => {
    // The shipped memory adapter, noting the first value set for each key.
    const map = new Map();
    const first = new Map();
    const inner = memoryAdapter(map);
    const note = (k, v) => { if (!first.has(k)) first.set(k, v.length); };
    const adapter = { ...inner,
      set: (k, v) => { note(k, v); return inner.set(k, v); },
      compareAndSet: (k, expected, v) => inner.compareAndSet(k, expected, v) && (note(k, v), true) };
    const client = await WowClient.connect({ user: null, baseUrl: base, storage: adapter, namespace: unique("fp"),
      timeoutMs: 30_000, waitStage: "PROCESSED", ...options });
    const states = {};
    for (let i = 0; i < n; i++) {
      const outcome = await client.send(command(i));
      states[outcome.status] = (states[outcome.status] ?? 0) + 1;
    }
    const keys = [...map.keys()].filter((k) => k.startsWith("wow-intents/"));
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    return { label, n, states, records: keys.length,
      beforeSendChars: mean(keys.map((k) => first.get(k))), settledChars: mean(keys.map((k) => map.get(k).length)),
      keyChars: mean(keys.map((k) => k.length)) };
  };
  const faults = (rules) => fetch(`${base}/__gateway/faults`, { method: "POST",
    headers: { "Content-Type": "application/json" }, body: JSON.stringify({ rules }) });
  const rows = [];
  rows.push(await measure("succeeded, small body", () => lock(id)));
  rows.push(await measure("succeeded, keyed", (i) => ({ ...lock(id), intentKey: `fp-${unique("k")}-${i}` })));
  rows.push(await measure("succeeded, 1 KiB body", () => ({ ...lock(id), body: { amount: 1, note: "x".repeat(1024) } })));
  // Unresolved for good: every answer dropped after the append, history unavailable.
  await faults([{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 10 * n },
    { match: { path: "/account/event/*" }, fault: "query_unavailable", times: 100 * n }]);
  rows.push(await measure("escalated (answer lost, history unavailable)", () => lock(id),
    { retry: { maxAttempts: 3, baseMs: 1, maxMs: 5, maxConfirms: 3 } }));
  await fetch(`${base}/__gateway/faults`, { method: "DELETE" });
  return rows;
}

/** 5c. The devtools panel on a journal of `n` intents (a memory adapter
 * holding copies of one real record): from mounting it open to its first
 * rows drawn (wall time), then `changes` intents sent one after another,
 * each change's panel work (filter and draw of the visible rows) timed. */
export async function devtoolsPanel(n, changes) {
  const { mountDevtools } = await import("/pkg/devtools.js");
  const map = new Map();
  const namespace = unique("devtools");
  const id = await account();
  const seed = await WowClient.connect({ user: null, baseUrl: base, storage: memoryAdapter(map), namespace, timeoutMs: 30_000 });
  await seed.sendAndWait(lock(id));
  seed.free();
  const [[key, text]] = [...map];
  const record = JSON.parse(text);
  const prefix = key.slice(0, key.length - record.intentId.length);
  for (let i = 0; i < n; i++) {
    const intentId = `${record.intentId.slice(0, 24)}${String(i).padStart(12, "0")}`;
    map.set(prefix + intentId, JSON.stringify({ ...record, intentId, requestId: intentId, createdAt: record.createdAt - n + i }));
  }
  const client = await WowClient.connect({ user: null, baseUrl: base, storage: memoryAdapter(map), namespace, timeoutMs: 30_000 });
  // First rows: the frame that paints them (the animation frame after they
  // are in the DOM), not a polling timer, which work queued behind the
  // paint (the panel's read of the quarantine) can hold back.
  const t0 = performance.now();
  const { element, unmount } = mountDevtools(client, { open: true, remember: false });
  const painted = new Promise((r) => {
    const observer = new MutationObserver(() => {
      if (!element.shadowRoot.querySelector(".row")) return;
      observer.disconnect();
      requestAnimationFrame(() => r(performance.now()));
    });
    observer.observe(element.shadowRoot, { childList: true, subtree: true });
  });
  const firstRows = (await painted) - t0;
  const shown = element.shown.length;
  const costs = [];
  const refilter = element.refilter.bind(element);
  element.refilter = (c) => { const t = performance.now(); refilter(c); costs.push(performance.now() - t); };
  for (let i = 0; i < changes; i++) {
    const before = costs.length;
    await client.sendAndWait(lock(id));
    while (costs.length === before || element.changed.size || element.flushing) await new Promise((r) => setTimeout(r, 1));
  }
  const rowsDrawn = element.shadowRoot.querySelectorAll(".row").length;
  unmount();
  await client.clear();
  client.free();
  return { n, shown, firstRows, rowsDrawn, costs };
}

/**
 * 4g. Crossings: the calls the module makes into JS (its imports, counted
 * by bench/run.mjs's wrapper of WebAssembly.instantiate in a page of its
 * own) per `sendAndWait` one after another, with `storage`; a count, not a
 * time, so it is the same on every run. Returns `{ [import]: calls }` per command.
 */
export async function crossings(n, storage) {
  const id = await account();
  const sdk = await connect(storage);
  for (let i = 0; i < 3; i++) await sdk.sendAndWait(lock(id));
  const before = new Map(window.crossed), platformBefore = new Map(window.platform);
  for (let i = 0; i < n; i++) await sdk.sendAndWait(lock(id));
  const perCommand = (now, then) => Object.fromEntries([...now].map(([k, v]) => [k, (v - (then.get(k) ?? 0)) / n]).filter(([, v]) => v > 0));
  const per = perCommand(window.crossed, before), platform = perCommand(window.platform, platformBefore);
  await sdk.clear();
  sdk.free();
  return { per, platform };
}

/**
 * 4h. One command's own work, the network and the gateway left out: the SDK
 * and the guarded peer each send `n` commands one after another to a
 * `fetch` that answers at once (a real answer of the gateway to the same
 * command, captured first, its requestId set to each request's), with the
 * journal `storage` ("localStorage" for both, or "indexedDB"). What is left
 * is each one's own work per command, and the browser's for its storage,
 * lock and channel: `variant` is "sdk" or "peer", run by the driver in
 * turns. The same answer goes to both.
 */
let ownWork;
export async function ownWorkSetup(storage) {
  const id = await account();
  const original = globalThis.fetch;
  const template = await captureRequest(lock(id));
  const { answer } = template;
  const sdk = await connect(storage);
  const peer = await guardedPeer(unique("own"), { storage });
  const stub = (input, init) => {
    const body = JSON.parse(answer.text);
    body.requestId = new Headers(init?.headers).get("command-request-id");
    return Promise.resolve(new Response(JSON.stringify(body), { status: answer.status, headers: answer.headers }));
  };
  ownWork = { id, sdk, peer, template, original, stub };
}

export async function ownWorkRun(variant, n) {
  const { id, sdk, peer, template, stub } = ownWork;
  globalThis.fetch = stub;
  try {
    const one = variant === "sdk" ? () => sdk.sendAndWait(lock(id)) : () => peer.send(template);
    for (let i = 0; i < 20; i++) await one();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await one();
    return performance.now() - t0;
  } finally {
    globalThis.fetch = ownWork.original;
    // What each kept, let go after the timing, so that a localStorage
    // journal does not fill over the rounds.
    if (variant === "sdk") await sdk.clear();
    else for (const key of Object.keys(localStorage)) if (key.startsWith("peer/own-")) localStorage.removeItem(key);
  }
}

export async function ownWorkTeardown() {
  await ownWork.sdk.clear();
  ownWork.sdk.free();
  ownWork.peer.close();
  ownWork = undefined;
}

/**
 * 8. Long tasks: the operations a page meets on a large journal, each run
 * alone so every main-thread task inside it is the SDK's (bench/run.mjs
 * traces each and reads its tasks). `longSeed(n)`: a namespace holding `n`
 * IndexedDB intents (copies of a real record, one in a hundred unresolved),
 * made outside any measurement.
 */
let longBench = null;
async function seedIndexedDB(namespace, n, template, every = 100) {
  const db = await new Promise((resolve, reject) => {
    const open = indexedDB.open(`wow-command-client/${namespace}`);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const old = Date.now() - 30 * 86_400_000;
  for (let done = 0; done < n; done += 1000) {
    const t = db.transaction(["intents"], "readwrite");
    for (let i = done; i < Math.min(n, done + 1000); i++) {
      const intentId = crypto.randomUUID();
      const unresolved = i % every === 0;
      t.objectStore("intents").put({ ...template, namespace, intentId, requestId: intentId, state: unresolved ? "unknown" : "succeeded",
        createdAt: old + i, updatedAt: old + i, revision: 1 }, intentId);
    }
    await new Promise((resolve, reject) => { t.oncomplete = resolve; t.onerror = () => reject(t.error); });
  }
  db.close();
}
/** `every`: one intent in so many unresolved (1: all). */
export async function longSeed(n, every = 100) {
  const namespace = unique("long");
  // The namespace's database, made as the SDK makes it.
  (await connect("indexedDB", namespace)).free();
  if (!longBench) {
    const id = await account();
    const first = await connect("indexedDB", namespace);
    await first.send(lock(id));
    const [template] = await first.intents();
    await first.clear();
    first.free();
    const template900 = await captureRequest(lock(id));
    longBench = { id, template, template900 };
  }
  await seedIndexedDB(namespace, n, longBench.template, every);
  return namespace;
}
/**
 * `longSeedLocal(n)`: a namespace holding as many of `n` intents as
 * localStorage takes (its quota refuses the rest), one in a hundred
 * unresolved; resolves to `[namespace, how many]`.
 */
export async function longSeedLocal(n) {
  const namespace = unique("long-ls");
  const old = Date.now() - 30 * 86_400_000;
  let stored = 0;
  for (; stored < n; stored++) {
    const intentId = crypto.randomUUID();
    const record = { ...longBench.template, namespace, intentId, requestId: intentId,
      state: stored % 100 === 0 ? "unknown" : "succeeded", createdAt: old + stored, updatedAt: old + stored, revision: 1 };
    try {
      localStorage.setItem(`wow-intents/${namespace}/${intentId}`, JSON.stringify(record));
    } catch {
      break;
    }
  }
  return [namespace, stored];
}

/** One operation on the seeded `namespace`; `client` kept between calls in `longBench.client`. */
export async function longRun(op, namespace, arg) {
  const b = longBench;
  const t0 = performance.now();
  if (op === "connect") {
    b.client?.free();
    b.client = await connect("indexedDB", namespace);
  } else if (op === "useIntents") {
    const { firstRender } = await import("/vendor/react-bench/first-render.js");
    const element = document.body.appendChild(document.createElement("div"));
    await firstRender(b.client, element);
    element.remove();
  } else if (op === "connectLocal") {
    // `namespace`: longSeedLocal's; the journal is localStorage's.
    const client = await connect("localStorage", namespace);
    client.free();
    localStorage.clear();
  } else if (op === "restartPrep") {
    // A client on `namespace` that says when it restarts (outside the trace).
    b.restarted = false;
    b.restarting = await WowClient.connect({ user: null, baseUrl: base, storage: "indexedDB", namespace, timeoutMs: 30_000,
      onRestart: () => { b.restarted = true; } });
    return 0;
  } else if (op === "restart") {
    // The page calls the client from the edge of its stack (`edgeRound`, a
    // deep recursion, each round a task of its own) until a call runs out
    // of stack inside the module, which stops; then its next call, which
    // waits for the fresh instance to take the client over. The rounds are
    // the caller's: what is counted is every task after the one that trapped.
    const client = b.restarting;
    const call = () => (client.send(lock(b.id)).catch(() => {}), 0);
    for (let round = 0; round < 60 && !b.restarted; round++) {
      // The caller's own work (bench/run.mjs counts the tasks after the last round's).
      performance.mark("bench-caller");
      window.edgeRound(call, round);
      await new Promise((r) => setTimeout(r));
    }
    if (!b.restarted) throw new Error("restart: no call stopped the module");
    await client.intents();
    client.free();
    b.restarting = null;
  } else if (op === "intents") {
    await b.client.intents();
  } else if (op === "quarantined") {
    await b.client.quarantined();
  } else if (op === "prune") {
    await b.client.prune();
  } else if (op === "resume") {
    // A client on `namespace` (all unresolved), until resume() has driven them.
    const client = await connect("indexedDB", namespace);
    const report = await client.resume();
    const left = (await client.intents()).filter((r) => !["succeeded", "rejected"].includes(r.state)).length;
    await client.clear();
    client.free();
    if (left) throw new Error(`resume: ${left} intents left unfinished (${report.driven.length} driven, ${report.busy.length} busy)`);
  } else if (op === "panel") {
    const { mountDevtools } = await import("/pkg/devtools.js");
    const { element, unmount } = mountDevtools(b.client, { open: true, remember: false });
    await new Promise((r) => {
      const observer = new MutationObserver(() => {
        if (!element.shadowRoot.querySelector(".row")) return;
        observer.disconnect();
        requestAnimationFrame(() => r());
      });
      observer.observe(element.shadowRoot, { childList: true, subtree: true });
    });
    unmount();
  } else if (op === "bodyPrep") {
    b.body = { aggregate: { resource: "account", id: b.id }, action: "lock_amount", body: orderBody(arg) };
    return 0;
  } else if (op === "body" || op === "bodyRaw") {
    b.body ??= { aggregate: { resource: "account", id: b.id }, action: "lock_amount", body: orderBody(arg) };
    if (op === "bodyRaw") {
      const t = b.template900;
      const answer = await rawFetch(t, t.url, JSON.stringify(b.body.body));
      if (answer.errorCode !== "Ok") throw new Error("raw: not Ok");
    } else if ((await b.client.sendAndWait(b.body)).errorCode !== "Ok") throw new Error("sdk: not Ok");
  } else if (op === "burst") {
    const outcomes = await Promise.all(Array.from({ length: arg }, () => b.client.send(lock(b.id))));
    if (outcomes.some((o) => o.status !== "succeeded")) throw new Error("burst: not all succeeded");
  } else if (op === "close") {
    await b.client?.clear();
    b.client?.free();
    b.client = null;
  } else throw new Error(`no operation ${op}`);
  return performance.now() - t0;
}

window.bench = { longSeed, longSeedLocal, longRun, ownWorkSetup, ownWorkRun, ownWorkTeardown, crossings, devtoolsPanel, overhead, stages, concurrency, cleanup, sharedBurst, bodySetup, bodyRun, bodyTeardown, scoped, journalScale, memory, footprint };
document.body.dataset.ready = "true";
