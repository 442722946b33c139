// The mistakes a new user makes in the first hour, and what the package says
// about each (in Node, through the package's node entry): a misspelled
// option, the browser's default storage where there is none, a wrong
// baseUrl, the app's own origin instead of the gateway's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { startGateway } from "../support/gateway.mjs";
import { WowClient } from "../../pkg/node.js";

let gateway;
before(async () => { gateway = await startGateway(); });
after(async () => { await gateway?.stop(); });

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;
const options = () => ({ user: null, baseUrl: gateway.base, storage: "memory", namespace: unique("first-hour") });
const create = (id) => ({ aggregate: { resource: "account", id }, action: "create_account", create: true,
  body: { name: "a", balance: 1 } });
/** A server on a free port answering every request with `status` and an empty body. */
const answering = (status) => new Promise((resolve) => {
  const server = createServer((_, res) => { res.statusCode = status; res.end(); })
    .listen(0, "127.0.0.1", () => resolve({ base: `http://127.0.0.1:${server.address().port}`, close: () => server.close() }));
});

const CONNECT_OPTIONS = "baseUrl, user, secretHeaders, maxAnswerBytes, wow, namespace, timeoutMs, waitStage, waitTimeoutMs, retry, legacyWaitTimeout, requestId, " +
  "retentionDays, resume, persistStorage, traceContext, callbackTimeoutMs, maxBodyChars, maxBodyDepth, offline, storage, " +
  "headers, confirm, confirmBatch, onEscalated, checkDownstream, onEvent, onHistory, onRestart";

/** connect's refusal of `given`: a TypeError naming connect, never a CommandError (no command was judged). */
const refused = async (given, message) => {
  const e = await WowClient.connect({ user: null, ...options(), ...given }).then(() => assert.fail("connected"), (e) => e);
  assert.ok(e instanceof TypeError, `a TypeError: ${e}`);
  assert.equal(e.code, undefined);
  assert.equal(e.outcome, undefined);
  assert.equal(e.message, `WowClient.connect: ${message}`);
};

test("a mistake in connect's options is a TypeError naming the option, not a command's outcome", async () => {
  const url = (u) => `baseUrl \`${u}\` must be an absolute http(s) URL with a host, no credentials, query or fragment`;
  for (const u of ["localhost:8080", "http://user:secret@gw.test", "http://exa mple.test", "https://gw.test/?x=1", "https://gw.test/a/../b"]) {
    await refused({ baseUrl: u }, url(u));
  }
  // Who is signed in is never guessed: left out, it is refused; null is an app without sign-in.
  const { user, ...anonymous } = options();
  const e = await WowClient.connect(anonymous).then(() => assert.fail("connected"), (e) => e);
  assert.ok(e instanceof TypeError);
  assert.equal(e.message, "WowClient.connect: options.user is required: the signed-in user's id, or null for an app without sign-in");
  await refused({ waitStage: "DONE" }, "unknown wait stage `DONE`: one of SENT, PROCESSED, SNAPSHOT, PROJECTED, EVENT_HANDLED, SAGA_HANDLED");
  await refused({ requestId: "v5" }, "requestId `v5`: use 'v7' or 'v4'");
  await refused({ timeoutMs: "soon" }, "options.timeoutMs must be a non-negative integer");
});

test("a misspelled option is refused, naming it and listing the known ones", async () => {
  await refused({ timeout: 5 }, `options.timeout is not an option (known: ${CONNECT_OPTIONS})`);
  await refused({ baseURL: "x" }, `options.baseURL is not an option (known: ${CONNECT_OPTIONS})`);
  await refused({ retry: { maxAttempt: 2 } }, "options.retry.maxAttempt is not an option (known: maxAttempts, baseMs, maxMs, maxConfirms)");
  // Every documented option is known, functions and storage included.
  const client = await WowClient.connect({ user: null, ...options(), timeoutMs: 5000, waitStage: "PROCESSED", waitTimeoutMs: 5000,
    retry: { maxAttempts: 2, baseMs: 10, maxMs: 100, maxConfirms: 2 }, legacyWaitTimeout: false, requestId: "v7",
    retentionDays: 1, resume: false, persistStorage: false, traceContext: false, callbackTimeoutMs: 1000,
    maxBodyChars: 1000, maxBodyDepth: 10, offline: "wait", headers: () => ({}), confirm: undefined,
    onEscalated: () => {}, checkDownstream: undefined, onEvent: () => {} });
  const e = await client.send({ ...create(unique("typo")), crate: true }).then(() => assert.fail("sent"), (e) => e);
  assert.equal(e.code, "InvalidCommand");
  assert.equal(e.message, "InvalidCommand: command.crate is not an option (known: aggregate, action, method, path, body, " +
    "intentKey, scope, waitStage, waitContext, waitProcessor, waitFunction, waitTailStage, expectedVersion, timeoutMs, waitTimeoutMs, " +
    "headers, create, idInPath)");
  const nested = await client.send({ ...create(unique("typo")), aggregate: { resource: "account", aggregateId: "x" } })
    .then(() => assert.fail("sent"), (e) => e);
  assert.equal(nested.message, "InvalidCommand: command.aggregate.aggregateId is not an option (known: contextAlias, resource, id, tenantId, ownerId)");
  assert.equal((await client.intents()).length, 0, "nothing was written, so nothing can be sent later");
});

test("every call's options are read as connect's are: an unknown key is a TypeError naming it, the known ones, and where a command's field goes", async () => {
  const client = await WowClient.connect(options());
  const id = unique("strict");
  // A TanStack Query habit: `scope` given as a call option, where it would be silently dropped.
  const e = await client.sendAndWait(create(id), { scope: "acct:1" }).then(() => assert.fail("sent"), (e) => e);
  assert.ok(e instanceof TypeError, `a TypeError: ${e}`);
  assert.equal(e.message, "sendAndWait: options.scope is not an option (known: signal, onIntent); `scope` is a field of the command");
  assert.equal((await client.intents()).length, 0, "nothing was written, so nothing can be sent later");
  const { arrivals } = await (await fetch(`${gateway.base}/__gateway/arrivals?contains=${id}`)).json();
  assert.deepEqual(arrivals, [], "nothing reached the gateway");
  // Every command field spelt as an option says so (the command reader's list, from its own message).
  const known = (await client.send({ ...create(unique("typo")), crate: true }).catch((e) => e)).message
    .match(/\(known: (.*)\)$/)[1].split(", ");
  assert.ok(known.length >= 18, known.join());
  for (const field of known) {
    const refusal = await client.send(create(unique("field")), { [field]: 1 }).catch((e) => e);
    assert.equal(refusal.message, `send: options.${field} is not an option (known: signal, onIntent); \`${field}\` is a field of the command`);
  }
  // Every call that takes options, and the decision of retry.
  const sent = await client.send(create(unique("strict")));
  const misspelt = { sigal: null };
  const calls = {
    send: () => client.send(create(unique("x")), misspelt),
    sendAndWait: () => client.sendAndWait(create(unique("x")), misspelt),
    sendAndWaitStream: async () => client.sendAndWaitStream(create(unique("x")), misspelt),
    confirm: () => client.confirm(sent.intentId, misspelt),
    retry: () => client.retry(sent.intentId, null, misspelt),
    resume: () => client.resume(misspelt),
    requestPersistentStorage: () => client.requestPersistentStorage(misspelt),
  };
  for (const [call, run] of Object.entries(calls)) {
    const refusal = await run().then(() => assert.fail(`${call} took it`), (e) => e);
    assert.ok(refusal instanceof TypeError, `${call}: ${refusal}`);
    assert.equal(refusal.message, `${call}: options.sigal is not an option (known: signal, onIntent)`);
  }
  const downstream = await client.awaitDownstream(sent.intentId, { timeout: 5 }).catch((e) => e);
  assert.ok(downstream instanceof TypeError);
  assert.equal(downstream.message, "awaitDownstream: options.timeout is not an option (known: signal, onIntent, stage, timeoutMs, check)");
  // The decision a conflict is re-decided with: a misspelt expectedVersion would retry expecting nothing.
  const decision = await client.retry(sent.intentId, { expectedversion: 3 }).catch((e) => e);
  assert.ok(decision instanceof TypeError);
  assert.equal(decision.message, "retry: decision.expectedversion is not an option (known: expectedVersion)");
  assert.throws(() => client.subscribe(() => {}, { state: ["succeeded"] }),
    (e) => e instanceof TypeError && e.message === "subscribe: filter.state is not an option (known: intentId, intentKey, states)");
  const [record] = (await client.intents()).filter((r) => r.intentId === sent.intentId);
  assert.equal(record.attempts.length, 1, "no refused call sent anything");
});

test("the default storage where there is no IndexedDB names what works here", async () => {
  const { storage, ...rest } = options();
  const e = await WowClient.connect(rest).then(() => assert.fail("connected"), (e) => e);
  assert.equal(e.code, "StorageUnavailable");
  assert.match(e.message, /IndexedDB \(the default storage\) is not available in this runtime: pass storage: an adapter \(wow-command-client\/adapters\) or "memory"$/);
});

test("a wrong baseUrl: the transport error names the URL it could not reach", async () => {
  const nobody = await answering(404);
  nobody.close(); // a port where nothing listens now
  const client = await WowClient.connect({ user: null, ...options(), baseUrl: nobody.base, timeoutMs: 2000,
    retry: { maxAttempts: 1, baseMs: 5, maxMs: 5, maxConfirms: 1 } });
  const e = await client.sendAndWait(create(unique("nowhere"))).then(() => assert.fail("succeeded"), (e) => e);
  assert.ok(e.message.includes(`(${nobody.base}/account/create_account)`), e.message);
});

test("the app's own origin by mistake: the 404 names the URL that answered it", async () => {
  const app = await answering(404);
  try {
    const client = await WowClient.connect({ user: null, ...options(), baseUrl: app.base, retry: { maxAttempts: 1 } });
    const e = await client.sendAndWait(create(unique("own-origin"))).then(() => assert.fail("succeeded"), (e) => e);
    assert.equal(e.code, "HttpStatus404");
    assert.ok(e.message.includes(`empty body from ${app.base}/account/create_account`), e.message);
  } finally {
    app.close();
  }
});

test("a create sent without `create: true` says what is usually missing; a missing aggregate does not", async () => {
  const client = await WowClient.connect(options());
  const id = unique("no-create");
  const { create: _, ...forgot } = create(id);
  const e = await client.sendAndWait(forgot).then(() => assert.fail("succeeded"), (e) => e);
  assert.equal(e.code, "NotFound");
  assert.equal(e.stage, null, "no stage: the gateway has no such route");
  assert.equal(e.message, `NotFound: No route for /account/${id}/create_account. (a create needs create: true)`);
  // The same command on an aggregate that does not exist went through the bus: no hint.
  const missing = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } })
    .then(() => assert.fail("succeeded"), (e) => e);
  assert.equal(missing.code, "NotFound");
  assert.equal(missing.stage, "PROCESSED");
  assert.doesNotMatch(missing.message, /create: true/);
  // With the flag, the create succeeds.
  assert.equal((await client.sendAndWait(create(id))).stage, "PROCESSED");
});

test("a body nested too deep says how deep, also beside an array too long to spread into a call", async () => {
  const client = await WowClient.connect({ user: null, ...options(), maxBodyDepth: 8 });
  const deep = {};
  let at = deep;
  for (let i = 0; i < 3000; i++) at = at.next = {};
  const body = { items: new Array(300_000).fill(0), deep };
  const e = await client.send({ aggregate: { resource: "account", id: unique("deep") }, action: "lock_amount", body })
    .then(() => assert.fail("sent"), (e) => e);
  assert.equal(e.code, "InvalidCommand");
  assert.equal(e.message, "InvalidCommand: command.body nests 3002 levels deep; the limit is 8 (maxBodyDepth)");
  assert.equal((await client.intents()).length, 0, "nothing was written");
});

test("a request that cannot be made never leaves: rejected, not appended, not retried as if lost", async () => {
  // A header the runtime refuses: the request cannot be made, so it never left.
  const client = await WowClient.connect({ ...options(), retry: { maxAttempts: 3, baseMs: 5, maxMs: 5 },
    headers: () => ({ "X-Unsendable": "\u00ff\u0100" }) });
  const e = await client.sendAndWait(create(unique("unmade"))).then(() => assert.fail("succeeded"), (e) => e);
  assert.equal(e.outcome, "rejected", e.message);
  assert.equal(e.appended, false);
  const [record] = await client.intents();
  assert.equal(record.attempts.length, 1, "one attempt, never sent again");
  client.free();
});
