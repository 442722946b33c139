// What Wow 9 changed on a command client's wire, through WowClient in Node
// against the test gateway, which follows Wow 9 by default and 8.10 with
// `--wow 8.10`:
//   - a `Command-Header-<key>` whose key Wow reserves is refused by the
//     gateway (400 IllegalArgument, nothing copied), so the client refuses
//     it when the command is given: a TypeError, nothing written, nothing sent;
//     One an earlier build stored is settled rejected (NotSent), never sent;
//   - a query's tree is `filter` or the deprecated `condition`, never both,
//     and 8.10 reads a `filter` it does not know as "everything";
//   - the client asks history in the shape `connect({ wow })` states (the
//     filter from 8.11, checked once per aggregate type), never in one
//     learned from an answer: against a gateway that reads no `condition`
//     (`--wow 10`, as planned for Wow 10) a lost answer is confirmed, and
//     against an 8.10 one misnamed as 9 nothing is ever read as appended.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount, startGateway } from "../support/gateway.mjs";
import { arrivals } from "../support/neighbour.mjs";
import { WowClient } from "../../pkg/node.js";
import { memoryAdapter } from "../../pkg/adapters.js";

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

let gateway, old, next, only, scoped;
before(async () => {
  [gateway, old, next, only, scoped] = await Promise.all([startGateway({ quiet: true }), startGateway({ quiet: true, wow: "8.10" }),
    startGateway({ quiet: true, wow: "10" }), startGateway({ quiet: true, gatewayOnly: true }), startGateway({ quiet: true, queryScope: true })]);
});
after(async () => { for (const g of [gateway, old, next, only, scoped]) await g?.stop(); });

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

const create = (id) => ({ aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } });
const connectTo = (at, options = {}) => WowClient.connect({ baseUrl: at.base, user: null, storage: memoryAdapter(new Map()),
  namespace: unique("shape"), timeoutMs: 3000, retry: { baseMs: 20, maxConfirms: 2 }, ...options });
/** The history queries `at` received since `since`: [path's last segment, body]. */
async function queries(at, since) {
  const r = await (await fetch(`${at.base}/__gateway/arrivals?since=${since}`)).json();
  return { next: r.next, asked: r.arrivals.filter((a) => /\/event\/(count|list)$/.test(a.path)).map((a) => [a.path.split("/").pop(), JSON.parse(a.body)]) };
}
const cursor = async (at) => (await queries(at, 0)).next;

test("connect({ wow }) is a Wow version: anything else is refused, naming the option", async () => {
  for (const wow of ["nine", "9.x", "", 9]) {
    const e = await connectTo(gateway, { wow }).then((c) => { c.free(); assert.fail(`accepted ${wow}`); }, (e) => e);
    assert.ok(e instanceof TypeError, String(e));
    assert.match(e.message, /options\.wow/);
  }
});

test("Wow 9 stated, against a gateway that reads only the filter (Wow 10's plan): a lost answer is confirmed, a lost command sent again with its requestId", async () => {
  const client = await connectTo(next, { wow: "9.1.3" });
  const [lost, dropped] = [unique("acct"), unique("acct")];
  await next.faults("POST", { rules: [{ match: { aggregateId: lost }, fault: "drop_response_after_append", times: 1 },
    { match: { aggregateId: dropped }, fault: "drop_request", times: 1 }] });
  const since = await cursor(next);
  const a = await client.send(create(lost));
  const b = await client.send(create(dropped));
  assert.deepEqual([a.status, a.appended, a.attempts], ["succeeded", true, 1], JSON.stringify(a));
  assert.deepEqual([b.status, b.attempts], ["succeeded", 2], JSON.stringify(b));
  const { asked } = await queries(next, since);
  assert.deepEqual((await arrivals(next, b.requestId)).map((x) => x.requestId), [b.requestId, b.requestId], "the same requestId again");
  assert.equal(await next.stored("account", dropped, b.requestId), 1);
  // One check of the route (a requestId never used counts 0), then each look in the filter shape.
  assert.deepEqual(asked[0], ["count", { op: "AND", operands: [{ op: "AGGREGATE_ID", value: lost },
    { field: "requestId", op: "EQ", value: "wow-command-client.query-shape-check" }] }]);
  assert.equal(asked.filter(([, body]) => JSON.stringify(body).includes("query-shape-check")).length, 1, "checked once");
  for (const [, body] of asked.slice(1)) assert.ok(body.op === "AND" || body.filter?.op === "AND", JSON.stringify(body));
  assert.ok(asked.length >= 3, JSON.stringify(asked));
  client.free();
});

test("no version stated, against a gateway that reads only the filter: the refused query is \"cannot confirm\", saying what the server said, never \"not appended\"", async () => {
  const client = await connectTo(next);
  const id = unique("acct");
  await next.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
  const outcome = await client.send(create(id));
  assert.deepEqual([outcome.status, outcome.appended ?? null, outcome.attempts], ["escalated", null, 1], JSON.stringify(outcome));
  assert.match(outcome.reason, /answered 400 QuerySchemaValidation: Nested filter expression must use op\. INVALID_REQUEST; the intent cannot be confirmed there/, outcome.reason);
  assert.equal(await next.stored("account", id, outcome.requestId), 1, "appended all the same: it is not resent");
  assert.equal((await arrivals(next, outcome.requestId)).length, 1);
  client.free();
});

test("Wow 9 stated, against an 8.10 gateway: the one-time check fails, so a command lost before the gateway is never reported appended", async () => {
  await createAccount(old.base); // the route has streams: 8.10 counts them for a filter it cannot read
  const client = await connectTo(old, { wow: "9.1.3" });
  const id = unique("acct");
  await old.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_request", times: 1 }] });
  const since = await cursor(old);
  const outcome = await client.send(create(id));
  assert.notEqual(outcome.status, "succeeded", JSON.stringify(outcome));
  assert.notEqual(outcome.appended, true);
  assert.equal(outcome.attempts, 1, "not resent blindly either");
  // 8.10 reads the filter as "everything": its default query guard refuses such a count (400), a
  // service without the guard counts every stream; either is "cannot confirm".
  assert.match(outcome.reason, /does not read the query shape of Wow 8\.11 and later|answered 400 IllegalArgument: Count queries must not match everything/, outcome.reason);
  const { asked } = await queries(old, since);
  assert.ok(asked.length >= 1 && asked.every(([, body]) => JSON.stringify(body).includes("query-shape-check")),
    `only the check was asked: ${JSON.stringify(asked)}`);
  assert.equal(await old.stored("account", id, outcome.requestId), 0);
  client.free();
});

test("8.10 stated (or nothing), against an 8.10 gateway: history is asked in the condition shape, as before", async () => {
  for (const options of [{ wow: "8.10.10" }, {}]) {
    const client = await connectTo(old, options);
    const id = unique("acct");
    await old.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
    const since = await cursor(old);
    const outcome = await client.send(create(id));
    assert.deepEqual([outcome.status, outcome.appended, outcome.attempts], ["succeeded", true, 1], JSON.stringify(outcome));
    const { asked } = await queries(old, since);
    assert.ok(asked.length >= 1 && asked.every(([, body]) => body.operator === "AND" || body.condition?.operator === "AND"), JSON.stringify(asked));
    client.free();
  }
});

/** PUTs `lock_amount` on `id` with `requestId`, waiting for `stage`; the answer's stage and code. */
async function lockAt(at, id, requestId, stage) {
  const r = await fetch(`${at.base}/account/${id}/lock_amount`, { method: "PUT", body: JSON.stringify({ amount: 1 }),
    headers: { "Content-Type": "application/json", "Command-Request-Id": requestId, "Command-Wait-Stage": stage } });
  const body = await r.json();
  return [r.status, body.stage, body.errorCode];
}

test("a gateway-only service (Wow 9.3) accepts a resent requestId at SENT and refuses it at PROCESSED; a full gateway refuses it at SENT", async () => {
  for (const [at, atSent, atProcessed] of [[only, [200, "SENT", "Ok"], [400, "PROCESSED", "DuplicateRequestId"]],
    [gateway, [400, "SENT", "DuplicateRequestId"], [400, "SENT", "DuplicateRequestId"]]]) {
    const id = await createAccount(at.base), requestId = crypto.randomUUID();
    assert.deepEqual(await lockAt(at, id, requestId, "PROCESSED"), [200, "PROCESSED", "Ok"]);
    assert.deepEqual(await lockAt(at, id, requestId, "SENT"), atSent);
    assert.deepEqual(await lockAt(at, id, requestId, "PROCESSED"), atProcessed);
    assert.equal(await at.stored("account", id, requestId), 1, "appended once");
  }
});

test("a resend accepted at SENT is reported succeeded only once history shows the intent appended (a gateway-only service)", async () => {
  const id = await createAccount(only.base);
  const map = new Map(), namespace = unique("resend");
  // The service answers SENT before it appends (its processing runs after the answer), so on a
  // loaded machine history may show the append a while after SENT: the resuming client looks as
  // often as a real deployment would need, the first only twice (its history is unavailable).
  const connect = (maxConfirms) => WowClient.connect({ baseUrl: only.base, user: null, storage: memoryAdapter(map), namespace,
    wow: "9.1.3", timeoutMs: 3000, retry: { baseMs: 20, maxConfirms } });
  // The first attempt never reaches the bus, and history cannot say so yet: the intent is left unresolved.
  await only.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_request", times: 1 },
    { match: { path: "*/event/*" }, fault: "query_unavailable" }] });
  const first = await connect(2);
  const left = await first.send({ ...lock(id), waitStage: "SENT" });
  assert.ok(["unknown", "escalated"].includes(left.status), JSON.stringify(left));
  first.free();
  await only.faults("DELETE");
  const since = await cursor(only);
  const client = await connect(8);
  const { driven } = await client.resume();
  const [outcome] = driven;
  assert.deepEqual([outcome.status, outcome.appended, outcome.attempts, outcome.result?.stage], ["succeeded", true, 2, "SENT"], JSON.stringify(outcome));
  assert.equal(outcome.requestId, left.requestId);
  // Asked history after the resend's SENT, not only before it.
  const r = await (await fetch(`${only.base}/__gateway/arrivals?since=${since}`)).json();
  const order = r.arrivals.map((a) => (a.requestId === left.requestId ? "send" : /\/event\/(count|list)$/.test(a.path) ? "look" : "other"));
  assert.ok(order.lastIndexOf("look") > order.indexOf("send"), order.join(" "));
  assert.equal(await only.stored("account", id, left.requestId), 1);
  client.free();
});

test("a gateway that requires a query scope: without credentials the 403 is \"cannot confirm\"; with them the lost answer is confirmed", async () => {
  for (const [headers, expected] of [[undefined, ["escalated", null, 1]], [() => ({ Authorization: "Bearer t" }), ["succeeded", true, 1]]]) {
    const client = await connectTo(scoped, { wow: "9.1.5", ...(headers ? { headers } : {}) });
    const id = unique("acct");
    await scoped.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
    const outcome = await client.send(create(id));
    assert.deepEqual([outcome.status, outcome.appended ?? null, outcome.attempts], expected, JSON.stringify(outcome));
    if (!headers) assert.match(outcome.reason, /answered 403 IllegalAccessQueryScope: The query requires an authenticated query scope\./, outcome.reason);
    assert.equal(await scoped.stored("account", id, outcome.requestId), 1, "appended once, never sent again");
    client.free();
  }
});
