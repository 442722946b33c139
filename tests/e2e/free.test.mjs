// `free()` ends a client at once (src/web/held.js letGoOf), in Chromium,
// Firefox and WebKit against the gateway. A client has three calls in
// flight on one account (the gateway holds their processing), each
// intent's Web Lock held. Then `free()`: every waiting call settles at once
// (`ClientFreed`, naming its intent), every intent's lock can be taken by
// another at once, its requests are aborted, the freed object refuses further calls, and a second
// client of the same journal resumes the three intents, confirming first:
// each lands exactly once.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount, startGateway } from "../support/gateway.mjs";
import { engines, launch, ready } from "../support/engines.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

// Runs in the page.
async function scenario({ ns, held }) {
  const { default: init, WowClient } = await import("/pkg/index.js");
  await init();
  const command = (note) => ({ aggregate: { resource: "account", id: held }, action: "lock_amount", body: { amount: 1, note } });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // Each request's signal, to see that letting go aborts it.
  const signals = [], fetch0 = window.fetch;
  window.fetch = (url, init) => { signals.push(init?.signal); return fetch0(url, init); };
  const a = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 8_000, retry: { baseMs: 50 } });
  const ids = {}, ended = {};
  const at = () => performance.now();
  a.sendAndWait(command("waited"), { onIntent: (id) => { ids.waited = id; } })
    .then(() => { ended.waited = { ok: true }; }, (e) => { ended.waited = { code: e.code, outcome: e.outcome, intentId: e.intentId, at: at() }; });
  a.send(command("sent"), { onIntent: (id) => { ids.sent = id; } })
    .then((o) => { ended.sent = { status: o.status, code: o.error?.errorCode ?? null, intentId: o.intentId, at: at() }; });
  const stream = a.sendAndWaitStream(command("streamed"), { onIntent: (id) => { ids.streamed = id; } });
  stream.outcome.then((o) => { ended.streamed = { status: o.status, code: o.error?.errorCode ?? null, intentId: o.intentId, at: at() }; });
  const names = () => Object.values(ids).map((id) => `wow-command-client/${ns}/${id}`);
  const heldNow = async () => (await navigator.locks.query()).held.map((l) => l.name);
  // Every intent is written and driven: its lock is held (the gateway holds the answers).
  for (let i = 0; i < 300; i++) {
    if (Object.keys(ids).length === 3 && (await heldNow()).filter((n) => names().includes(n)).length === 3) break;
    await sleep(10);
  }
  const lockedBefore = (await heldNow()).filter((n) => names().includes(n)).length;
  const sentBefore = signals.length;
  const freedAt = at();
  a.free();
  for (let i = 0; i < 200 && Object.keys(ended).length < 3; i++) await sleep(5);
  const settledMs = Math.max(...Object.values(ended).map((e) => (e.at ?? Infinity) - freedAt));
  const aborted = signals.slice(0, sentBefore).filter((s) => s?.aborted).length;
  window.fetch = fetch0;
  // Another holder takes each lock at once.
  const free = [];
  for (const name of names()) free.push(await navigator.locks.request(name, { ifAvailable: true }, (l) => l !== null));
  let refused = null;
  try { a.send(command("after")); } catch (e) { refused = String(e.message); }
  // A second client of the same journal finishes what the freed one left.
  const b = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 8_000, retry: { baseMs: 50 } });
  const report = await b.resume();
  let records = [];
  for (let i = 0; i < 300; i++) {
    records = (await b.intents()).filter((r) => Object.values(ids).includes(r.intentId));
    if (records.length === 3 && records.every((r) => r.state === "succeeded")) break;
    await sleep(50);
  }
  b.free();
  return { ids, ended, lockedBefore, settledMs, sentBefore, aborted, free, refused, driven: report.driven,
    records: records.map((r) => [r.intentId, r.requestId, r.state]) };
}

for (const engine of engines) {
  test(`${engine}: free() settles every waiting call at once and lets go of every lock`, { timeout: 120_000 }, async (t) => {
    if (!ready(t, engine)) return;
    const browser = await launch(engine);
    try {
      const held = await createAccount(gateway.base, "freed");
      await gateway.faults("POST", { rules: [{ match: { aggregateId: held }, fault: "delay", delayMs: 2_000, times: 3 }] });
      const page = await browser.newPage();
      await page.goto(`${gateway.base}/pkg/index.js`);
      await page.evaluate((arg) => {
        window.result = undefined;
        (0, eval)(`(${arg.scenario})`)(arg).then((r) => { window.result = r; }, (e) => { window.result = { error: `${e}\n${e && e.stack}` }; });
      }, { scenario: String(scenario), ns: `freed-${Math.random().toString(36).slice(2, 10)}`, held });
      const r = await page.waitFor(() => window.result, null, 90_000);
      assert.ok(!r.error, r.error);
      if (process.env.FREE_DEBUG) console.log(JSON.stringify(r));
      assert.equal(r.lockedBefore, 3, "each intent's lock was held before free()");
      assert.deepEqual(r.ended.waited && [r.ended.waited.code, r.ended.waited.outcome, r.ended.waited.intentId], ["ClientFreed", "unknown", r.ids.waited]);
      assert.deepEqual([r.ended.sent?.status, r.ended.sent?.code, r.ended.sent?.intentId], ["unknown", "ClientFreed", r.ids.sent]);
      assert.deepEqual([r.ended.streamed?.status, r.ended.streamed?.code], ["unknown", "ClientFreed"]);
      assert.ok(r.settledMs < 500, `every call settled ${r.settledMs} ms after free() (the gateway held them 2 s)`);
      assert.deepEqual(r.free, [true, true, true], "each intent's lock was free at once");
      assert.ok(r.sentBefore >= 3, `its requests were made (${r.sentBefore})`);
      assert.equal(r.aborted, r.sentBefore, "every request it had made was aborted");
      assert.match(r.refused ?? "", /freed/, "the freed object refuses a call");
      assert.equal(r.records.length, 3);
      for (const [, , state] of r.records) assert.equal(state, "succeeded", JSON.stringify(r.records));
      await gateway.idle();
      for (const [, requestId] of r.records) {
        assert.equal(await gateway.stored("account", held, requestId), 1, `${requestId} landed once`);
      }
      await page.close();
    } finally {
      await gateway.faults("DELETE");
      await browser.close();
    }
  });
}

// The other way a client ends: the app drops it while a call still waits
// (a script that awaits its one call and never names the client again).
// Its finalizer frees it, and that call ends as it would have, not with
// ClientFreed; then what the client held is let go.
test("node: a client collected while its call waits lets that call end as it would", { timeout: 60_000 }, async () => {
  const { setFlagsFromString } = await import("node:v8");
  const { runInNewContext } = await import("node:vm");
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const { WowClient } = await import("../../pkg/node.js");
  const held = await createAccount(gateway.base, "collected");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: held }, fault: "delay", delayMs: 1_000, times: 1 }] });
  try {
    let client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory", namespace: `collected-${Math.random().toString(36).slice(2, 10)}` });
    const ref = new WeakRef(client);
    const pending = client.sendAndWait({ aggregate: { resource: "account", id: held }, action: "lock_amount", body: { amount: 1, note: "collected" } });
    client = null;
    for (let i = 0; i < 20 && ref.deref(); i++) { await new Promise((r) => setTimeout(r, 10)); gc(); }
    assert.equal(ref.deref(), undefined, "the client was collected while its call waited");
    const result = await pending;
    assert.equal(result.errorCode, "Ok", "the call ended as it would");
    await gateway.idle();
    assert.equal(await gateway.stored("account", held, result.requestId), 1);
  } finally {
    await gateway.faults("DELETE");
  }
});
