// A large journal is read, handed out and pruned in slices, the page's own
// tasks running between them (no long task: bench/run.mjs --only longtasks
// measures it), with nothing lost, doubled or reordered: in Chromium, Firefox
// and WebKit, through WowClient, on a caller's adapter (whose answers come at
// once, so nothing but the slicing lets the page in) and on IndexedDB (read
// a page at a time in one transaction).
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount as createAccountOn, startGateway } from "../support/gateway.mjs";
import { testEachEngine } from "../support/engines.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/**
 * In `page`: a client on `storage` ("adapter" or "indexedDB") whose journal
 * holds `n` copies of a real record (one in four settled a month ago, the
 * rest now; created in an order their ids do not follow) and `aside`
 * unreadable ones. `window.client`, `window.expected` (the ids oldest
 * first) and `window.pages(work)` (how many of the page's tasks ran while
 * `work` was pending) are left for the case.
 */
async function journal(page, storage, n, aside, account) {
  await page.goto(`${gateway.base}/pkg/index.js`);
  return page.evaluate(async ({ storage, n, aside, account, ns }) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    const { memoryAdapter } = await import("/pkg/adapters.js");
    await init();
    const map = new Map();
    const options = { user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 10_000,
      storage: storage === "adapter" ? memoryAdapter(map) : "indexedDB" };
    const first = await WowClient.connect(options);
    await first.sendAndWait({ aggregate: { resource: "account", id: account }, action: "lock_amount", body: { amount: 1 } });
    const [template] = await first.intents();
    first.free();
    const month = Date.now() - 31 * 86_400_000;
    const records = [];
    for (let i = 0; i < n; i++) {
      const intentId = `${template.intentId.slice(0, 24)}${String((i * 7919) % n).padStart(12, "0")}`;
      const at = i % 4 === 0 ? month + i : Date.now() - n + i;
      records.push({ ...template, intentId, requestId: intentId, createdAt: at, updatedAt: at, revision: 1 });
    }
    const prefix = storage === "adapter" ? [...map.keys()].find((k) => k.endsWith(template.intentId)).slice(0, -template.intentId.length) : "";
    if (storage === "adapter") {
      map.clear();
      for (const r of records) map.set(prefix + r.intentId, JSON.stringify(r));
      for (let i = 0; i < aside; i++) map.set(`${prefix}broken-${i}`, "{ not json");
    } else {
      const db = await new Promise((resolve, reject) => {
        const open = indexedDB.open(`wow-command-client/${ns}`);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      const t = db.transaction(["intents"], "readwrite");
      t.objectStore("intents").clear();
      for (const r of records) t.objectStore("intents").put(r, r.intentId);
      for (let i = 0; i < aside; i++) t.objectStore("intents").put({ not: "a record" }, `broken-${i}`);
      await new Promise((resolve, reject) => { t.oncomplete = resolve; t.onerror = () => reject(t.error); });
      db.close();
    }
    window.expected = [...records].sort((a, b) => a.createdAt - b.createdAt).map((r) => r.intentId);
    window.month = records.filter((r, i) => i % 4 === 0).length;
    window.pages = async (work) => {
      let ran = 0, done = false;
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { ran++; if (!done) channel.port2.postMessage(0); };
      channel.port2.postMessage(0);
      const value = await work();
      done = true;
      channel.port1.close();
      return { ran, value };
    };
    const connected = await window.pages(() => WowClient.connect(options));
    window.client = connected.value;
    return connected.ran;
  }, { storage, n, aside, account, ns: unique("slices") });
}

const read = (page) => page.evaluate(async () => {
  const intents = await window.pages(() => window.client.intents());
  const quarantined = await window.pages(() => window.client.quarantined());
  const ids = intents.value.map((r) => r.intentId);
  return { intentsRan: intents.ran, quarantinedRan: quarantined.ran, ids,
    inOrder: JSON.stringify(ids) === JSON.stringify(window.expected), unique: new Set(ids).size,
    quarantined: quarantined.value.length };
});

const prune = (page) => page.evaluate(async () => {
  const pruned = await window.pages(() => window.client.prune());
  return { ran: pruned.ran, removed: pruned.value, month: window.month, left: (await window.client.intents()).length };
});

const cases = {
  async "a caller's adapter: 3,000 intents read and handed out in slices, the page's tasks between them"(browser) {
    const page = await browser.newPage();
    const n = 3000;
    const connectRan = await journal(page, "adapter", n, 3, await createAccountOn(gateway.base, "slices"));
    const r = await read(page);
    // The adapter answers at once: without slices each call would end before any task of the page's ran.
    assert.ok(connectRan > 0, `connect let the page's tasks run (${connectRan})`);
    assert.ok(r.intentsRan > 0 && r.quarantinedRan > 0, `intents() and quarantined() let them run: ${r.intentsRan}, ${r.quarantinedRan}`);
    assert.equal(r.ids.length, n);
    assert.equal(r.unique, n, "none doubled");
    assert.ok(r.inOrder, "oldest first, as created");
    assert.equal(r.quarantined, 3, "the unreadable ones, moved aside");
    const p = await prune(page);
    assert.equal(p.removed, p.month, "every settled intent past retention, and no other");
    assert.equal(p.left, n - p.month);
    await page.close();
  },

  async "IndexedDB: 1,000 intents and 2 unreadable (read 500 a page, in one transaction), handed out and pruned"(browser) {
    const page = await browser.newPage();
    const n = 1000;
    await journal(page, "indexedDB", n, 2, await createAccountOn(gateway.base, "slices"));
    const r = await read(page);
    assert.ok(r.intentsRan > 0, `intents() let the page's tasks run (${r.intentsRan})`);
    assert.equal(r.ids.length, n);
    assert.equal(r.unique, n, "none doubled");
    assert.ok(r.inOrder, "oldest first, as created");
    assert.equal(r.quarantined, 2);
    const p = await prune(page);
    assert.equal(p.removed, p.month);
    assert.equal(p.left, n - p.month);
    await page.close();
  },
};

testEachEngine("slices", cases, 120_000);
