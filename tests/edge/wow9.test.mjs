// What Wow 9 changed on a command client's wire, through WowClient in Node
// against the test gateway, which follows Wow 9 by default and 8.10 with
// `--wow 8.10`:
//   - a `Command-Header-<key>` whose key Wow reserves is refused by the
//     gateway (400 IllegalArgument, nothing copied), so the client refuses
//     it when the command is given: a TypeError, nothing written, nothing sent;
//     One an earlier build stored is settled rejected (NotSent), never sent;
//   - a query's tree is `filter` or the deprecated `condition`, never both,
//     and 8.10 reads a `filter` it does not know as "everything".
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount, startGateway } from "../support/gateway.mjs";
import { arrivals } from "../support/neighbour.mjs";
import { WowClient } from "../../pkg/node.js";
import { memoryAdapter } from "../../pkg/adapters.js";

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

let gateway, old;
before(async () => { [gateway, old] = await Promise.all([startGateway({ quiet: true }), startGateway({ quiet: true, wow: "8.10" })]); });
after(async () => { await gateway?.stop(); await old?.stop(); });

const post = (base, path, body) => fetch(`${base}${path}`, {
  method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
  .then(async (r) => ({ status: r.status, body: await r.json() }));

test("the gateway reads a query's tree as Wow 9 (filter or condition, never both) or as 8.10 (a filter it does not know is everything)", async () => {
  // Two accounts on each, so that "the one stream" is a choice the tree made.
  const [id] = [await createAccount(gateway.base), await createAccount(gateway.base)];
  const [oldId, oldOther] = [await createAccount(old.base), await createAccount(old.base)];
  const filter = (aggregateId) => ({ op: "AND", operands: [{ op: "AGGREGATE_ID", value: aggregateId }, { op: "EQ", field: "version", value: 1 }] });
  const condition = (aggregateId) => ({ operator: "AND", children: [{ operator: "AGGREGATE_ID", value: aggregateId }, { field: "version", operator: "EQ", value: 1 }] });
  // Wow 9: each shape finds the one stream; a count's body is the bare tree.
  for (const body of [{ filter: filter(id), limit: 10 }, { condition: condition(id), limit: 10 }]) {
    const r = await post(gateway.base, "/account/event/list", body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.map((s) => s.aggregateId), [id]);
  }
  assert.deepEqual(await post(gateway.base, "/account/event/count", filter(id)), { status: 200, body: 1 });
  const both = await post(gateway.base, "/account/event/list", { filter: filter(id), condition: condition(id), limit: 10 });
  assert.equal(both.status, 400);
  assert.equal(both.body.errorCode, "QuerySchemaValidation");
  assert.equal(both.body.bindingErrors[0].code, "INVALID_REQUEST");
  const stray = await post(gateway.base, "/account/event/count", { op: "AGGREGATE_ID", value: id, children: [] });
  assert.deepEqual([stray.status, stray.body.bindingErrors[0]?.code], [400, "UNKNOWN_PROPERTY"]);
  // 8.10: the filter is not read; the list's tree is "everything" (the danger a client must never misread).
  const seen = await post(old.base, "/account/event/list", { filter: filter(oldId), limit: 1000 });
  assert.equal(seen.status, 200);
  assert.ok(seen.body.some((s) => s.aggregateId === oldOther), "8.10 answered streams the filter excludes");
  assert.deepEqual((await post(old.base, "/account/event/list", { condition: condition(oldId), limit: 10 })).body.map((s) => s.aggregateId), [oldId]);
});

const lock = (id, headers) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 }, headers });

test("the gateway, as Wow 9, refuses a Command-Header- key the framework reserves, and appends nothing", async () => {
  const id = await createAccount(gateway.base);
  for (const [name, ok] of [["Command-Header-trace_id", false], ["command-header-Command_Wait_Stage", false],
    ["Command-Header-compensate.id", false], ["Command-Header-app", true]]) {
    const requestId = crypto.randomUUID();
    const r = await fetch(`${gateway.base}/account/${id}/lock_amount`, {
      method: "PUT", body: JSON.stringify({ amount: 1 }),
      headers: { "Content-Type": "application/json", "Command-Request-Id": requestId, [name]: "spoofed" } });
    const answer = await r.json();
    if (ok) {
      assert.equal(r.status, 200, JSON.stringify(answer));
    } else {
      assert.equal(r.status, 400, JSON.stringify(answer));
      assert.equal(answer.errorCode, "IllegalArgument");
      assert.match(answer.errorMsg, /is reserved by the framework/);
    }
    assert.equal(await gateway.stored("account", id, requestId), ok ? 1 : 0, name);
  }
});

test("a command carrying a header key Wow reserves is refused when given: a TypeError naming the rule and the key, nothing written or sent", async () => {
  const id = await createAccount(gateway.base);
  const map = new Map();
  const client = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace: unique("wow9") });
  const written = map.size;
  for (const name of ["Command-Header-trace_id", "Command-Header-COMMAND_OPERATOR", "command-header-command_wait_stage",
    "Command-Header-traceparent", "Command-Header-app_id"]) {
    const e = await client.send(lock(id, { [name]: "spoofed" })).then(() => assert.fail("accepted"), (e) => e);
    assert.ok(e instanceof TypeError, String(e));
    const key = name.slice("Command-Header-".length);
    assert.match(e.message, new RegExp(`^send: command\\.headers\\.${name}: Wow reserves the message header key \`${key}\`.*IllegalArgument`));
  }
  assert.equal(map.size, written, "nothing written");
  assert.deepEqual(await client.intents(), []);
  assert.equal((await gateway.history("account", id)).length, 1, "only the create reached history");
  // The app's own keys go through.
  const sent = await client.sendAndWait(lock(id, { "Command-Header-app": "oms" }));
  assert.equal(sent.errorCode, "Ok");
  assert.equal((await gateway.history("account", id)).length, 2);
  client.free();
});

test("a stored intent an earlier build wrote with a reserved header key is settled rejected (NotSent), nothing sent", async () => {
  const id = await createAccount(gateway.base);
  const map = new Map(), namespace = unique("wow9-old");
  // Written offline, so it waits unsent; then its record is given a key an earlier build let through.
  globalThis.navigator ??= {};
  const was = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { configurable: true, value: { onLine: false } });
  let pending;
  try {
    const writer = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace, offline: "return" });
    pending = await writer.send(lock(id, { "Command-Header-app": "oms" }));
    writer.free();
  } finally {
    Object.defineProperty(globalThis, "navigator", was);
  }
  const key = `wow-intents/${namespace}/${pending.intentId}`;
  const record = JSON.parse(map.get(key));
  record.command.headers.push(["Command-Header-trace_id", "spoofed"]);
  map.set(key, JSON.stringify(record));
  const client = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace });
  const { driven } = await client.resume();
  assert.equal(driven.length, 1, JSON.stringify(driven));
  const [outcome] = driven;
  assert.deepEqual([outcome.status, outcome.appended, outcome.error?.errorCode], ["rejected", false, "NotSent"], JSON.stringify(outcome));
  assert.match(outcome.error.errorMsg, /Command-Header-trace_id.*Wow reserves its key/);
  assert.deepEqual(await arrivals(gateway, pending.requestId), [], "nothing reached the gateway");
  assert.equal(await gateway.stored("account", id, pending.requestId), 0);
  client.free();
});
