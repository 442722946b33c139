// The package in a real edge runtime: Cloudflare's workerd (through
// miniflare, which ships the runtime binary), with the intent journal in
// Workers KV persisted to disk. The worker is torn down mid-flight and a
// new one, over the same KV data, resumes the same intents with the same
// requestIds; the gateway's history is checked independently.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { root, startGateway } from "../support/gateway.mjs";

let gateway;
const kvDir = mkdtempSync(join(tmpdir(), "wow-edge-kv-"));

before(async () => { gateway = await startGateway(); });
after(async () => { await gateway?.stop(); });

function worker() {
  return new Miniflare({
    modules: true,
    modulesRoot: root,
    scriptPath: join(root, "tests/edge/worker.js"),
    modulesRules: [{ type: "ESModule", include: ["**/*.js"] }, { type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-07-01",
    kvNamespaces: ["JOURNAL"],
    durableObjects: { EFFECTS: "EffectsObject" },
    kvPersist: kvDir,
    bindings: { GATEWAY: gateway.base },
  });
}

async function call(mf, path, body) {
  const r = await mf.dispatchFetch(`http://worker${path}`, body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const value = await r.json();
  assert.equal(r.status, 200, JSON.stringify(value));
  return value;
}

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

test("a worker restarted mid-flight resumes the same intents with the same requestIds", async () => {
  const ns = unique("restart");
  const ids = [unique("edge"), unique("edge"), unique("edge")];
  const commands = ids.map((id) => ({
    aggregate: { resource: "account", id }, action: "create_account", create: true,
    body: { name: id, balance: 10 }, intentKey: `open:${id}`,
  }));
  // Every command is held 1.5 s at the gateway, then appended anyway.
  await gateway.faults("POST", { rules: [{ match: { path: "/account*" }, fault: "delay", delayMs: 1500, times: 3 }] });

  let mf = worker();
  const inFlight = call(mf, `/send?ns=${ns}`, commands).catch((e) => e);
  let before = [];
  for (let i = 0; i < 100 && before.filter((r) => r.state === "sending").length < 3; i++) {
    await new Promise((r) => setTimeout(r, 50));
    before = await call(mf, `/intents?ns=${ns}`);
  }
  assert.equal(before.filter((r) => r.state === "sending").length, 3, JSON.stringify(before));
  await mf.dispose(); // the runtime is gone, responses and all
  assert.ok((await inFlight) instanceof Error, "the first worker never answered");

  mf = worker();
  try {
    const journaled = await call(mf, `/intents?ns=${ns}`);
    const requestIds = (records) => Object.fromEntries(records.map((r) => [r.aggregate.aggregateId, r.requestId]));
    assert.deepEqual(requestIds(journaled), requestIds(before), "the journal survived the restart");
    const report = await call(mf, `/resume?ns=${ns}`);
    assert.equal(report.driven.length, 3);
    const sentWith = Object.fromEntries(before.map((r) => [r.intentId, r.requestId]));
    for (const outcome of report.driven) {
      assert.equal(outcome.status, "succeeded", JSON.stringify(outcome));
      assert.equal(outcome.requestId, sentWith[outcome.intentId], "resumed with the requestId sent before");
    }
    const after = await call(mf, `/intents?ns=${ns}`);
    assert.deepEqual(requestIds(after), requestIds(before));
    assert.ok(after.every((r) => r.state === "succeeded"), JSON.stringify(after.map((r) => r.state)));
    for (const r of after) {
      assert.equal(await gateway.stored("account", r.aggregate.aggregateId, r.requestId), 1,
        `exactly one stream for ${r.requestId}`);
    }
  } finally {
    await mf.dispose();
  }
});

test("an idempotent consumer in the worker runs each identity's effect once across redeliveries", async () => {
  const ns = unique("consumer");
  const account = unique("acct");
  const mf = worker();
  try {
    const [created] = await call(mf, `/send?ns=${ns}`, [{
      aggregate: { resource: "account", id: account }, action: "create_account", create: true,
      body: { name: account, balance: 100 } }]);
    assert.equal(created.status, "succeeded");
    const identity = crypto.randomUUID();
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await call(mf, `/consume?ns=${ns}`, { identity, aggregateId: account }));
    assert.deepEqual(outcomes.map((o) => o.status), ["ran", "skipped", "skipped"]);
    assert.equal(outcomes[0].result.status, 200);
    assert.deepEqual(outcomes[2].result, outcomes[0].result, "a skip returns the recorded result");
    assert.equal(await gateway.stored("account", account, identity), 1, "the effect happened once");
  } finally {
    await mf.dispose();
  }
});

test("concurrent invocations delivering one identity through a Durable Object run its effect once", async () => {
  const mf = worker();
  try {
    const ns = unique("do");
    for (const identity of ["evt-a", "evt-b"]) {
      const outcomes = await Promise.all([1, 2, 3].map(() => call(mf, `/race-do?ns=${ns}`, { identity })));
      assert.deepEqual(outcomes.map((o) => o.status).sort(), ["ran", "skipped", "skipped"], JSON.stringify(outcomes));
      const [after] = await Promise.all([call(mf, `/race-do?ns=${ns}`, { identity })]);
      assert.equal(after.status, "skipped");
      assert.equal(after.runs, 1, "the effect ran once");
    }
  } finally {
    await mf.dispose();
  }
});

test("two workerd runtimes over one Workers KV store: a consumer refuses to open unless duplicates are accepted", async () => {
  const [a, b] = [worker(), worker()];
  try {
    for (const mf of [a, b]) {
      const r = await mf.dispatchFetch("http://worker/consume-strict?ns=strict", { method: "POST", body: "{}" });
      const value = await r.json();
      assert.equal(r.status, 500, JSON.stringify(value));
      assert.equal(value.code, "StorageCannotExclude");
    }
  } finally {
    await Promise.all([a.dispose(), b.dispose()]);
  }
});

test("client.subscribe in workerd (no BroadcastChannel) reports what this runtime's client writes", async () => {
  const mf = worker();
  try {
    const id = unique("sub");
    const r = await call(mf, `/subscribe?ns=${unique("sub")}`, {
      aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } });
    assert.equal(r.broadcastChannel, false, "this runtime has no BroadcastChannel");
    assert.equal(r.outcome.status, "succeeded");
    const mine = r.events.filter(([intentId]) => intentId === r.outcome.intentId);
    assert.deepEqual(mine.map(([, state]) => state), ["sending", "succeeded"], JSON.stringify(r.events));
    assert.equal(mine.at(-1)[2], 1, "one attempt");
  } finally {
    await mf.dispose();
  }
});
