// Group commit in real Chromium: the IndexedDB journal's writes that fall due
// together share one transaction, and durability does not weaken: a page
// killed in the middle of a burst leaves every intent the gateway received
// in the journal, and resume() finishes them, one stream each.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";
import { root } from "../support/gateway.mjs";

const env = gatewayAndChromium({ quiet: true });

const snippets = readdirSync(join(root, "pkg/snippets"))[0];
const idbModule = `/pkg/snippets/${snippets}/src/web/storage/indexed_db.js`;

/** The requestId of every stream the gateway holds for these accounts, from its query API. */
async function requestIdsOf(accounts) {
  const ids = [];
  for (const id of accounts) {
    const r = await fetch(`${env.gateway.base}/account/event/list`, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ condition: { operator: "AGGREGATE_ID", value: id }, limit: 1000 }) });
    ids.push(...(await r.json()).map((s) => s.requestId));
  }
  return ids;
}

test("writes that fall due together share a transaction, and each keeps its own compare-and-swap", async () => {
  const page = await env.browser.newPage();
  await page.goto(`${env.gateway.base}/pkg/index.js`);
  const r = await page.evaluate(async ([url, name]) => {
    const { idbOpen, idbCas, idbGet } = await import(url);
    const db = await idbOpen(name);
    let transactions = 0;
    const original = IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function (stores, mode, options) {
      if (mode === "readwrite") transactions++;
      return original.call(this, stores, mode, options);
    };
    const rec = (revision, n) => ({ revision, n });
    // 200 first writes of distinct keys at once, strict.
    const firsts = await Promise.all(Array.from({ length: 200 }, (_, i) => idbCas(db, "intents", `k${i}`, 0, rec(1, i), true)));
    const burstTransactions = transactions;
    // Two first writes of one key: one wins, the other is told the revision it met.
    const race = await Promise.all([idbCas(db, "intents", "same", 0, rec(1, "a"), true), idbCas(db, "intents", "same", 0, rec(1, "b"), true)]);
    // A chain on one key in one batch: each sees the one before it.
    const chain = await Promise.all([
      idbCas(db, "intents", "k0", 1, rec(2, "x"), true),
      idbCas(db, "intents", "k0", 2, rec(3, "y"), false),
      idbCas(db, "intents", "k0", 2, rec(3, "stale"), true),
    ]);
    // A relaxed write queued behind a batch in flight answers only once its
    // own batch's transaction carries it, before its read and put have run;
    // a read asked for then is ordered after it and sees it.
    const answered = [];
    const inFlight = idbCas(db, "intents", "k2", 1, rec(2, "s"), true);
    const relaxed = idbCas(db, "intents", "k1", 1, rec(2, "r"), false).then(() => { answered.push("relaxed"); });
    const strictMate = idbCas(db, "intents", "k3", 1, rec(2, "t"), true).then(() => { answered.push("strict"); });
    await relaxed;
    const readAfterRelaxed = (await idbGet(db, "intents", "k1"))?.n;
    await Promise.all([inFlight, strictMate]);
    // A value the store cannot clone fails alone; its batch-mates commit.
    const mixed = await Promise.allSettled([
      idbCas(db, "intents", "bad", 0, { revision: 1, f: () => 1 }, true),
      idbCas(db, "intents", "good", 0, rec(1, "g"), true),
    ]);
    IDBDatabase.prototype.transaction = original;
    const stored = await Promise.all(["k0", "k199", "same", "good", "bad"].map((k) => idbGet(db, "intents", k)));
    db.close();
    return { firsts, burstTransactions, race, chain, readAfterRelaxed, answered,
      mixed: mixed.map((m) => m.status === "fulfilled" ? m.value : m.reason.name), stored };
  }, [idbModule, unique("wow-command-client/group-commit")]);
  assert.ok(r.firsts.every((f) => f === null), "every first write succeeded");
  assert.ok(r.burstTransactions < 20, `200 writes in ${r.burstTransactions} transactions`);
  assert.deepEqual(r.race.slice().sort(), [1, null].sort(), "one wins, one meets revision 1");
  assert.deepEqual(r.chain, [null, null, 3], "the chain runs in order; the stale write meets revision 3");
  assert.equal(r.readAfterRelaxed, "r", "a read after a relaxed write's answer sees it");
  assert.deepEqual(r.answered, ["relaxed", "strict"], "the relaxed write answered before its strict batch-mate's commit");
  assert.deepEqual(r.mixed, ["DataCloneError", null]);
  assert.deepEqual(r.stored.map((s) => s && s.n), ["y", 199, r.race[0] === null ? "a" : "b", "g", null]);
});

test("a page killed in the middle of a burst leaves every intent the gateway received in its journal", async () => {
  const context = await env.browser.newContext();
  const ns = unique("burst");
  const accounts = Array.from({ length: 10 }, () => unique("burst-acct"));
  const creates = new Set();
  for (const id of accounts) {
    const r = await fetch(`${env.gateway.base}/account/create_account`, {
      method: "POST", headers: { "Content-Type": "application/json", "Command-Aggregate-Id": id },
      body: JSON.stringify({ name: id, balance: 1_000_000 }) });
    assert.equal(r.status, 200);
    creates.add((await r.json()).requestId);
  }
  // Every command is held at the gateway after it arrives (the append still happens).
  await env.gateway.faults("POST", { rules: accounts.map((id) => ({ match: { aggregateId: id }, fault: "delay", delayMs: 1500, times: 1000 })) });
  const page = await context.newPage();
  await page.goto(`${env.gateway.base}/pkg/index.js`);
  await page.evaluate(async ([ns, accounts]) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    const client = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: ns, timeoutMs: 30_000 });
    window.burst = Promise.allSettled(Array.from({ length: 300 }, (_, i) => client.send({
      aggregate: { resource: "account", id: accounts[i % accounts.length] }, action: "lock_amount", body: { amount: 1 } })));
  }, [ns, accounts]);
  // Kill the renderer once the gateway holds a good share of the burst.
  for (let i = 0; i < 200; i++) {
    const { processing } = await env.gateway.faults("GET");
    if (processing >= 100) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const cdp = await context.newCDPSession(page);
  // The crash ends the page; the CDP call itself may never answer.
  void cdp.send("Page.crash").catch(() => {});
  await new Promise((r) => setTimeout(r, 200));
  await env.gateway.idle(120_000);
  await env.gateway.faults("DELETE");

  const received = (await requestIdsOf(accounts)).filter((rid) => !creates.has(rid));
  assert.ok(received.length > 0, "the gateway appended part of the burst before the kill");

  const again = await context.newPage();
  await again.goto(`${env.gateway.base}/pkg/index.js`);
  const after = await again.evaluate(async (ns) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    const client = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: ns, timeoutMs: 30_000 });
    const before = (await client.intents()).map((i) => i.requestId);
    await client.resume();
    const settled = await client.intents();
    return { before, states: settled.map((i) => i.state) };
  }, ns);
  const journal = new Set(after.before);
  const lost = received.filter((rid) => !journal.has(rid));
  assert.deepEqual(lost, [], `${lost.length} of ${received.length} received intents are missing from the journal`);
  assert.ok(after.states.every((s) => s === "succeeded"), `resume() finished them: ${[...new Set(after.states)]}`);
  // One stream per intent: resume() confirmed what had been appended instead of sending it again.
  const finalHistory = await requestIdsOf(accounts);
  const counts = new Map();
  for (const rid of finalHistory) counts.set(rid, (counts.get(rid) ?? 0) + 1);
  assert.deepEqual([...counts].filter(([, n]) => n > 1), [], "no intent appended twice");
  assert.equal(finalHistory.filter((rid) => journal.has(rid)).length, journal.size, "every journaled intent appended once");
  await context.close();
});
