// The package in plain Node.js: a file-backed journal survives SIGKILL of
// the process mid-flight, and a new process resumes the same intents with
// the same requestIds; idempotent consumers across processes and within one
// (two "workers" over one store), with crashes and failing storage.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root, startGateway } from "../support/gateway.mjs";
import { WowClient } from "../../pkg/node.js";
import { IdempotentConsumer, EffectError } from "../../pkg/consumer-node.js";
import { memoryAdapter } from "../../pkg/adapters.js";

let gateway;
before(async () => { gateway = await startGateway(); });
after(async () => { await gateway?.stop(); });

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;
const script = new URL("./node-process.mjs", import.meta.url).pathname;

/** Runs the child; resolves to its JSON lines. `until(lines)` kills it with SIGKILL once true. */
function child(args, until) {
  return start(args, until).result;
}

function start(args, until) {
  const proc = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = [];
  let buffer = "";
  const result = new Promise((resolve, reject) => {
    proc.stdout.on("data", (d) => {
      buffer += d;
      let i;
      while ((i = buffer.indexOf("\n")) >= 0) {
        lines.push(JSON.parse(buffer.slice(0, i)));
        buffer = buffer.slice(i + 1);
      }
      if (until && until(lines)) proc.kill("SIGKILL");
    });
    proc.once("exit", (code, signal) => resolve({ code, signal, lines }));
    proc.once("error", reject);
  });
  return { proc, result };
}

async function createAccount(id) {
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory" });
  await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account", create: true,
    body: { name: id, balance: 100 } });
}

test("a process killed mid-flight: a new process resumes the same intents with the same requestIds", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wow-node-journal-"));
  const ns = unique("restart");
  const ids = [unique("node"), unique("node"), unique("node")];
  const commands = ids.map((id) => ({
    aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 5 } }));
  await gateway.faults("POST", { rules: [{ match: { path: "/account*" }, fault: "delay", delayMs: 1500, times: 3 }] });

  const sender = start(["send", dir, ns, gateway.base, JSON.stringify(commands)]);
  let journaled = [];
  for (let i = 0; i < 100 && journaled.filter((r) => r.state === "sending").length < 3; i++) {
    await new Promise((r) => setTimeout(r, 50));
    journaled = (await child(["intents", dir, ns, gateway.base])).lines[0];
  }
  assert.equal(journaled.filter((r) => r.state === "sending").length, 3);
  // SIGKILL the sender while its three requests are held at the gateway.
  sender.proc.kill("SIGKILL");
  const killed = await sender.result;
  assert.equal(killed.signal, "SIGKILL");
  assert.equal(killed.lines.length, 0, "the sender never answered");

  const { lines: [report] } = await child(["resume", dir, ns, gateway.base]);
  const sentWith = Object.fromEntries(journaled.map((r) => [r.intentId, r.requestId]));
  assert.equal(report.driven.length, 3);
  for (const outcome of report.driven) {
    assert.equal(outcome.status, "succeeded", JSON.stringify(outcome));
    assert.equal(outcome.requestId, sentWith[outcome.intentId]);
  }
  for (const r of journaled) {
    assert.equal(await gateway.stored("account", r.aggregate.aggregateId, r.requestId), 1);
  }
});

test("a crash between the effect and its record goes to reconciliation, not to a second effect", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wow-node-effects-"));
  const ns = unique("crash");
  const account = unique("acct");
  await createAccount(account);
  const identity = crypto.randomUUID();
  const delivery = JSON.stringify({ identity, aggregateId: account, hang: true });
  // First delivery: the effect reaches the gateway, then the process dies.
  const first = await child(["consume", dir, ns, gateway.base, delivery], (lines) => lines.some((l) => l.effectDone));
  assert.equal(first.signal, "SIGKILL");
  assert.equal(await gateway.stored("account", account, identity), 1);
  // Redelivery in a new process: the lease (300 ms) ends, the external
  // system is asked, the effect is not run again.
  const again = JSON.stringify({ identity, aggregateId: account, hang: false });
  const second = await child(["consume", dir, ns, gateway.base, again]);
  const last = second.lines.at(-1);
  assert.deepEqual(second.lines[0], { reconciled: 1, previousAttempt: 1 });
  assert.equal(last.outcome.status, "reconciled");
  assert.equal(last.effects, 0);
  assert.deepEqual(last.outcome.result, { status: 200, recovered: true });
  // And a third delivery skips.
  const third = (await child(["consume", dir, ns, gateway.base, again])).lines.at(-1);
  assert.equal(third.outcome.status, "skipped");
  assert.equal(third.effects, 0);
  assert.equal(await gateway.stored("account", account, identity), 1);
});

test("an effect that failed before reaching the system: the redelivery reconciles and runs it again, once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wow-node-effects-"));
  const ns = unique("early");
  const account = unique("acct");
  await createAccount(account);
  const identity = crypto.randomUUID();
  // The effect's request is dropped before the bus: the effect throws.
  await gateway.faults("POST", { rules: [{ match: { requestId: identity }, fault: "drop_request", times: 1 }] });
  const first = await child(["consume", dir, ns, gateway.base, JSON.stringify({ identity, aggregateId: account })]);
  assert.equal(await gateway.stored("account", account, identity), 0);
  assert.equal(first.lines.at(-1).error, "EffectFailed");
  const second = (await child(["consume", dir, ns, gateway.base, JSON.stringify({ identity, aggregateId: account })])).lines;
  assert.deepEqual(second[0], { reconciled: 0, previousAttempt: 1 });
  const last = second.at(-1);
  assert.equal(last.outcome.status, "ran");
  assert.equal(last.outcome.attempt, 2);
  assert.equal(last.effects, 1);
  assert.equal(await gateway.stored("account", account, identity), 1);
});

/** A KV store without compareAndSet (as Workers KV has none). */
function kvWithoutCas() {
  const m = new Map();
  return {
    async get(k) { return m.has(k) ? m.get(k) : null; },
    async set(k, v) { m.set(k, v); },
    async delete(k) { m.delete(k); },
    async list(p) { return [...m.entries()].filter(([k]) => k.startsWith(p)); },
  };
}

test("a store that can neither compare-and-swap nor lock refuses, unless duplicates are accepted by name", async () => {
  await assert.rejects(IdempotentConsumer.open({ storage: kvWithoutCas() }),
    (e) => e instanceof EffectError && e.code === "StorageCannotExclude" && /compareAndSet/.test(e.message));
  const consumer = await IdempotentConsumer.open({ storage: kvWithoutCas(), allowDuplicateEffects: true });
  assert.equal((await consumer.handle("evt-ok", () => 1)).status, "ran");
});

test("a polluted Object.prototype gives a consumer's store no compareAndSet: it still refuses to run without exclusion", async () => {
  let refused;
  try {
    Object.prototype.compareAndSet = async () => true;
    refused = await IdempotentConsumer.open({ storage: kvWithoutCas() }).then(() => null, (e) => e);
  } finally {
    delete Object.prototype.compareAndSet;
  }
  assert.ok(refused instanceof EffectError && refused.code === "StorageCannotExclude", String(refused));
});

test("deliveries of one identity inside one process take turns, whatever the store", async () => {
  const shared = kvWithoutCas();
  const open = () => IdempotentConsumer.open({ storage: shared, leaseMs: 5_000, allowDuplicateEffects: true });
  const [a, b] = [await open(), await open()];
  let effects = 0;
  const effect = async (key) => {
    effects += 1;
    await new Promise((r) => setTimeout(r, 100));
    return `sent ${key}`;
  };
  // Two on the same instance, one on another: the case that ran the effect three times.
  const outcomes = await Promise.all([a.handle("msg-kv", effect), a.handle("msg-kv", effect), b.handle("msg-kv", effect)]);
  assert.equal(effects, 1, JSON.stringify(outcomes.map((o) => o.status)));
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ["ran", "skipped", "skipped"]);
  for (const o of outcomes) assert.equal(o.result, "sent msg-kv");
});

test("two workers delivering one identity at once: one runs, the other waits and skips", async () => {
  const shared = memoryAdapter();
  const [a, b] = await Promise.all([1, 2].map(() => IdempotentConsumer.open({ storage: shared, leaseMs: 5_000 })));
  let effects = 0;
  const effect = async (key) => {
    effects += 1;
    await new Promise((r) => setTimeout(r, 200));
    return `sent ${key}`;
  };
  const [first, second] = await Promise.all([a.handle("msg-1", effect), b.handle("msg-1", effect)]);
  assert.equal(effects, 1);
  assert.deepEqual([first.status, second.status].sort(), ["ran", "skipped"]);
  assert.equal(first.result, "sent msg-1");
  assert.equal(second.result, "sent msg-1");
});

test("failing storage: nothing runs before `started` is durable; a lost `done` is reconciled", async () => {
  const inner = memoryAdapter();
  let writesLeft = 0;
  const flaky = {
    ...inner,
    compareAndSet(key, expected, value) {
      if (writesLeft-- <= 0) throw Object.assign(new Error("quota"), { name: "QuotaExceededError" });
      return inner.compareAndSet(key, expected, value);
    },
  };
  const consumer = await IdempotentConsumer.open({ storage: flaky, leaseMs: 0 });
  let effects = 0;
  const effect = () => { effects += 1; return "ok"; };
  await assert.rejects(consumer.handle("evt", effect), (e) => e instanceof EffectError && e.code === "StorageUnavailable");
  assert.equal(effects, 0);
  writesLeft = 1;
  await assert.rejects(consumer.handle("evt", effect), (e) => e.code === "DoneNotRecorded" && e.result === "ok");
  assert.equal(effects, 1);
  writesLeft = 10;
  await assert.rejects(consumer.handle("evt", effect), (e) => e.code === "NeedsReconciliation" && e.record.state === "started");
  const outcome = await consumer.handle("evt", effect, { reconcile: () => ({ done: "ok" }) });
  assert.equal(outcome.status, "reconciled");
  assert.equal(effects, 1);
});

test("a version conflict goes to the caller; retry() sends it again with its requestId, once; a settled one is not retried", async () => {
  const id = unique("retry");
  await createAccount(id);
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory",
    retry: { baseMs: 20, maxMs: 50, maxConfirms: 2 } });
  const stale = { aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 }, expectedVersion: 7 };
  const conflict = await client.sendAndWait(stale).then(() => assert.fail("no conflict"), (e) => e);
  assert.deepEqual([conflict.outcome, conflict.code, conflict.appended], ["conflict", "CommandExpectVersionConflict", false]);
  // The person reloads, decides, and retries at the version they saw.
  const retried = await client.retry(conflict.intentId, { expectedVersion: 1 });
  assert.deepEqual([retried.status, retried.appended, retried.requestId], ["succeeded", true, conflict.requestId]);
  await gateway.idle();
  assert.equal(await gateway.stored("account", id, conflict.requestId), 1, "appended once");
  const again = await client.retry(conflict.intentId, { expectedVersion: 2 }).then(() => assert.fail("retried"), (e) => e);
  assert.equal(again.code, "NotInConflict");
  client.free();
});

test("bad input is refused with typed errors", async () => {
  await assert.rejects(IdempotentConsumer.open({ storage: "memory", leaseMs: -1 }), (e) => e.code === "InvalidOptions");
  await assert.rejects(IdempotentConsumer.open("x"), (e) => e.code === "InvalidOptions");
  await assert.rejects(IdempotentConsumer.open({ storage: "indexedDB" }), (e) => e.code === "StorageUnavailable");
  const consumer = await IdempotentConsumer.open({ storage: "memory" });
  await assert.rejects(consumer.handle("", () => 1), (e) => e.code === "InvalidIdentity");
  await assert.rejects(consumer.handle("x".repeat(600), () => 1), (e) => e.code === "InvalidIdentity");
  const thrown = await consumer.handle("boom", () => { throw new TypeError("no"); }).catch((e) => e);
  assert.equal(thrown.code, "EffectFailed");
  assert.ok(thrown.cause instanceof TypeError);
  assert.equal(thrown.record.lastError, "TypeError: no");
});

test("onIntent: told the intent's id once, after its record is written and before anything is sent", async () => {
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory", namespace: unique("on-intent") });
  const id = unique("acct");
  const create = { aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } };
  const told = [];
  let journaled;
  const outcome = await client.send(create, { onIntent: (intentId) => {
    told.push(intentId);
    journaled = client.intents().then((all) => all.find((r) => r.intentId === intentId)?.state);
    throw new Error("the listener's own failure changes nothing");
  } });
  assert.equal(outcome.status, "succeeded");
  assert.deepEqual(told, [outcome.intentId], "once, with the outcome's intent");
  const then = await journaled;
  assert.ok(["pending", "sending"].includes(then), `the record was there before the send: ${then}`);
  // A keyed intent found settled is not written again: no call, the Outcome names it.
  const keyed = { ...create, action: "lock_amount", create: false, body: { amount: 1 }, intentKey: `lock-${id}` };
  const first = await client.send(keyed, { onIntent: (i) => told.push(i) });
  const again = await client.send(keyed, { onIntent: (i) => told.push(`again ${i}`) });
  assert.equal(again.intentId, first.intentId);
  assert.deepEqual(told, [outcome.intentId, first.intentId]);
  await assert.rejects(client.send(create, { onIntent: "no" }), (e) => e instanceof TypeError && e.message === "send: options.onIntent must be a function");
  client.free();
});

test("a confirm callback gets a plain question with the documented keys, and its answer settles the intent", async () => {
  const questions = [];
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory", namespace: unique("confirm-cb"), timeoutMs: 2_000,
    confirm: async (q) => { questions.push(q); return { appended: (await gateway.stored("account", q.aggregateId, q.requestId)) > 0 }; } });
  const id = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
  const outcome = await client.send({ aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } });
  assert.equal(outcome.status, "succeeded");
  assert.equal(outcome.appended, true);
  assert.ok(questions.length >= 1);
  const [q] = questions;
  assert.equal(Object.getPrototypeOf(q), Object.prototype);
  assert.deepEqual(Object.keys(q).sort(), ["aggregateId", "needFacts", "requestId", "resource", "user"]);
  assert.deepEqual({ ...q, needFacts: typeof q.needFacts }, { aggregateId: id, requestId: outcome.requestId, resource: "account", needFacts: "boolean", user: null });
  client.free();
});

test("confirmBatch is asked about lost answers together, each answer matched by both ids; an intent it leaves out is not answered", async () => {
  const batches = [];
  const ids = [unique("acct"), unique("acct"), unique("acct"), unique("left")];
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory", namespace: unique("confirm-batch"), timeoutMs: 2_000,
    retry: { maxConfirms: 2 },
    confirmBatch: async (questions) => {
      batches.push(questions);
      // The first look is slow enough for the burst's other questions to wait
      // for the next (a lone question is asked at once; those asked while a
      // look runs go together in the next).
      for (let i = 0; batches.length === 1 && client.history.waiting < ids.length && i < 250; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const answers = [];
      for (const q of questions) {
        if (q.aggregateId.startsWith("left")) continue;
        answers.push({ aggregateId: q.aggregateId, requestId: q.requestId, appended: (await gateway.stored("account", q.aggregateId, q.requestId)) > 0 });
      }
      // About someone else's request on the same aggregate: no evidence for this intent.
      answers.push({ aggregateId: questions[0].aggregateId, requestId: "someone-elses", appended: false });
      return answers;
    } });
  await gateway.faults("POST", { rules: ids.map((id) => ({ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 })) });
  const outcomes = await Promise.all(ids.map((id) => client.send({ aggregate: { resource: "account", id }, action: "create_account",
    create: true, body: { name: id, balance: 1 } })));
  assert.deepEqual(outcomes.map((o) => [o.status, o.attempts]), [["succeeded", 1], ["succeeded", 1], ["succeeded", 1], ["escalated", 1]],
    "confirmed from the batch's answers, never resent; the one left out is not taken as not appended");
  assert.ok(batches.some((b) => b.length > 1), `asked together: ${batches.map((b) => b.length)}`);
  assert.ok(batches.length < ids.length + 2, `${batches.length} calls for ${ids.length} intents`);
  const [q] = batches[0];
  assert.deepEqual(Object.keys(q).sort(), ["aggregateId", "needFacts", "requestId", "resource", "user"]);
  for (const [i, id] of ids.entries()) assert.equal(await gateway.stored("account", id, outcomes[i].requestId), 1);
  client.free();
});

test("telemetry: lifecycle events for a lost answer and a retried send, one trace per intent, a new span per attempt; a throwing or slow listener changes nothing", async () => {
  const events = [];
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory", namespace: unique("telemetry"), timeoutMs: 3_000,
    retry: { baseMs: 20, maxMs: 40 }, traceContext: true,
    onEvent: (e) => {
      events.push(e);
      const until = Date.now() + 5; while (Date.now() < until) { /* a slow listener */ }
      throw new Error("a broken listener");
    } });
  const lost = unique("acct"), dropped = unique("acct");
  await gateway.faults("POST", { rules: [
    { match: { aggregateId: lost }, fault: "drop_response_after_append", times: 1 },
    { match: { aggregateId: dropped }, fault: "drop_request", times: 1 },
  ] });
  const create = (id) => ({ aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } });
  const [a, b] = [await client.send(create(lost)), await client.send(create(dropped))];
  assert.deepEqual([a.status, a.attempts, b.status, b.attempts], ["succeeded", 1, "succeeded", 2]);
  await new Promise((r) => setTimeout(r, 20)); // events are delivered after the task's work
  const of = (o) => events.filter((e) => e.intentId === o.intentId);
  const kinds = (o) => of(o).map((e) => e.kind);
  assert.deepEqual(kinds(a), ["attemptSent", "attemptEnded", "confirmAsked", "confirmAnswered", "outcome"]);
  assert.deepEqual(kinds(b), ["attemptSent", "attemptEnded", "confirmAsked", "confirmAnswered", "retryScheduled", "attemptSent", "attemptEnded", "outcome"]);
  const answered = of(a).find((e) => e.kind === "confirmAnswered");
  assert.equal(answered.answerOfHistory, "appended");
  assert.equal(of(b).find((e) => e.kind === "confirmAnswered").answerOfHistory, "notAppended");
  const ended = of(a).find((e) => e.kind === "attemptEnded");
  assert.equal(ended.waitEndedBy, "lost");
  assert.ok(Math.abs(ended.callerTimeoutMs - 3_000) <= 20, `the caller waited 3 s: ${ended.callerTimeoutMs}`);
  for (const e of [...of(a), ...of(b)]) {
    assert.equal(e.version, 1);
    assert.equal(typeof e.at, "number");
    assert.equal(e.aggregate.resource, "account");
    assert.equal(e.waitStage, "PROCESSED");
    assert.ok(!("body" in e) && !("command" in e), "no body in an event");
  }
  assert.equal(of(a).at(-1).state, "succeeded");
  assert.equal(of(b).find((e) => e.kind === "retryScheduled").retryAt > 0, true);
  // One trace id per intent (its requestId's hex digits), a new span per attempt.
  const sent = of(b).filter((e) => e.kind === "attemptSent");
  const trace = `00-${b.requestId.replaceAll("-", "")}-`;
  for (const e of sent) assert.match(e.traceparent, new RegExp(`^${trace}[0-9a-f]{16}-01$`));
  assert.notEqual(sent[0].traceparent, sent[1].traceparent);
  assert.deepEqual(sent.map((e) => e.attempt), [1, 2]);
  await gateway.idle();
  assert.equal(await gateway.stored("account", dropped, b.requestId), 1);
  client.free();
});

test("an effect that never settles: the call ends at its deadline, the record stays started, the next delivery reconciles", async () => {
  const consumer = await IdempotentConsumer.open({ storage: memoryAdapter(), leaseMs: 5_000, effectTimeoutMs: 150,
    callbackTimeoutMs: 200 });
  const hung = await consumer.handle("evt-hang", () => new Promise(() => {})).catch((e) => e);
  const settledAt = Date.now();
  assert.ok(hung instanceof EffectError, String(hung));
  assert.equal(hung.code, "EffectTimedOut");
  assert.match(hung.message, /150 ms/);
  // Before the lease it started with would have run out (the call ends at the effect's 150 ms deadline).
  assert.ok(settledAt < hung.record.startedAt + 5_000, "settled at the effect's deadline, not at the end of the 5 s lease");
  assert.equal(hung.record.state, "started");
  assert.match(hung.record.lastError, /effectTimeoutMs/);
  // The lock is released and the lease ended: the next delivery reconciles at once.
  let effects = 0;
  const outcome = await consumer.handle("evt-hang", () => { effects += 1; return "again"; },
    { reconcile: () => "run" });
  assert.equal(outcome.status, "ran");
  assert.equal(effects, 1);
  // A per-call deadline, and 0 for unbounded.
  const quick = await consumer.handle("evt-slow", () => new Promise((r) => setTimeout(() => r("late"), 300)),
    { effectTimeoutMs: 50 }).catch((e) => e);
  assert.equal(quick.code, "EffectTimedOut");
  const patient = await consumer.handle("evt-slow-2", () => new Promise((r) => setTimeout(() => r("late"), 300)),
    { effectTimeoutMs: 0 });
  assert.equal(patient.result, "late");
  // A reconcile that never settles is bounded too (callback deadline), and the consumer keeps working.
  const stuck = await consumer.handle("evt-slow", () => 1, { reconcile: () => new Promise(() => {}) }).catch((e) => e);
  assert.equal(stuck.code, "ReconcileFailed");
  assert.equal((await consumer.handle("evt-fine", () => "ok")).status, "ran");
});

test("Node resolves the package by name to its node entry, which needs no init", async () => {
  const app = mkdtempSync(join(tmpdir(), "wow-node-app-"));
  mkdirSync(join(app, "node_modules"));
  symlinkSync(join(root, "pkg"), join(app, "node_modules/wow-command-client"), "dir");
  writeFileSync(join(app, "app.mjs"), `
    import { WowClient } from "wow-command-client";
    import { fileAdapter } from "wow-command-client/adapters/node";
    export { WowClient, fileAdapter };
    export const entry = import.meta.resolve("wow-command-client");
  `);
  const named = await import(pathToFileURL(join(app, "app.mjs")));
  assert.match(named.entry, /\/node\.js$/);
  const client = await named.WowClient.connect({ user: null, baseUrl: gateway.base, storage: named.fileAdapter(join(app, "journal")) });
  const id = unique("named");
  const result = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
    create: true, body: { name: id, balance: 1 } });
  assert.equal(result.aggregateId, id);
});

test("a journal that refuses writes: the command is never sent, and the error says so", async () => {
  const account = unique("acct");
  await createAccount(account);
  const refusing = { ...memoryAdapter(),
    compareAndSet() { throw Object.assign(new Error("disk full"), { name: "QuotaExceededError" }); } };
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: refusing });
  const error = await client.sendAndWait({ aggregate: { resource: "account", id: account }, action: "lock_amount",
    body: { amount: 1 } }).catch((e) => e);
  assert.equal(error.code, "StorageUnavailable");
  assert.equal(error.appended, false);
  assert.ok(error.requestId);
  assert.equal(await gateway.stored("account", account, error.requestId), 0, "nothing reached the gateway");
});

test("an escalated intent asked again later does not keep a Node.js process alive", async () => {
  // The history cannot be asked (the confirmer throws), so the intent ends
  // escalated and the client schedules its own re-confirm: the process must
  // still exit as soon as its own work is done.
  const source = `
    import { WowClient } from ${JSON.stringify(pathToFileURL(join(root, "pkg/node.js")).href)};
    const client = await WowClient.connect({ user: null, baseUrl: ${JSON.stringify(gateway.base)}, storage: "memory", timeoutMs: 2000,
      retry: { maxConfirms: 1 }, confirm: () => { console.log("confirm"); throw new Error("no history here"); } });
    await fetch(${JSON.stringify(gateway.base)} + "/__gateway/faults", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ rules: [{ match: { aggregateId: "idle-exit" }, fault: "drop_response_after_append", times: 1 }] }) });
    const o = await client.send({ aggregate: { resource: "account", id: "idle-exit" }, action: "create_account", create: true,
      body: { name: "idle", balance: 1 } });
    console.log(o.status);`;
  const out = await new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--input-type=module", "-e", source], { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    proc.stdout.on("data", (d) => { text += d; });
    const timer = setTimeout(() => { proc.kill("SIGKILL"); reject(new Error(`still running after 20 s: ${text}`)); }, 20_000);
    proc.on("exit", () => { clearTimeout(timer); resolve(text.trim().split("\n")); });
  });
  // The first re-confirm is due 1-2 s after the escalation: a process that
  // waited for it would print "confirm" after "escalated" (and never exit).
  assert.equal(out.at(-1), "escalated", `the process exited once its work was done: ${out}`);
  assert.ok(out.slice(0, -1).every((l) => l === "confirm") && out.length >= 2, `asked history first: ${out}`);
});

test("client.subscribe in Node.js: another client's intents, filtered, a throwing listener ignored, stopped on demand", async () => {
  const ns = unique("subscribe");
  const map = new Map();
  const sender = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: memoryAdapter(map), namespace: ns });
  const watcher = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: memoryAdapter(map), namespace: ns });
  const all = [], settled = [], keyed = [];
  const stops = [
    watcher.subscribe((e) => all.push(e)),
    watcher.subscribe((e) => settled.push(e.state), { states: ["succeeded", "rejected"] }),
    watcher.subscribe((e) => keyed.push(e.state), { intentKey: `open:${ns}` }),
    sender.subscribe(() => { throw new Error("a broken listener"); }),
  ];
  const id = unique("sub");
  const o = await sender.send({ aggregate: { resource: "account", id }, action: "create_account", create: true,
    body: { name: id, balance: 1 }, intentKey: `open:${ns}` });
  assert.equal(o.status, "succeeded", "a throwing listener changes nothing");
  const until = Date.now() + 5_000;
  while (!all.some((e) => e.state === "succeeded") && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  const mine = all.filter((e) => e.intentId === o.intentId);
  assert.deepEqual(mine.map((e) => e.state), ["sending", "succeeded"]);
  const last = mine.at(-1);
  assert.equal(last.version, 1);
  assert.equal(last.intentKey, `open:${ns}`);
  assert.equal(last.requestId, o.requestId);
  assert.deepEqual(last.aggregate, { resource: "account", aggregateId: id });
  assert.equal(last.attempts, 1);
  assert.equal(last.appended, true);
  assert.ok(last.revision > mine[0].revision);
  assert.deepEqual(settled, ["succeeded"]);
  assert.deepEqual(keyed, ["sending", "succeeded"]);
  for (const stop of stops) stop();
  const id2 = unique("sub");
  await sender.send({ aggregate: { resource: "account", id: id2 }, action: "create_account", create: true, body: { name: id2, balance: 1 } });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(all.filter((e) => e.aggregate?.aggregateId === id2).length, 0, "nothing after unsubscribing");
  assert.throws(() => watcher.subscribe("not a function"), (e) => e instanceof TypeError && e.message === "subscribe: listener must be a function");
  assert.throws(() => watcher.subscribe(() => {}, { states: "succeeded" }), (e) => e instanceof TypeError && e.message === "subscribe: filter.states must be an array of intent states");
});

test("free() twice, or a dispose after it, does nothing, and a detached method says so: the module does not stop, other clients go on", async () => {
  const restarts = [];
  const options = { user: null, baseUrl: gateway.base, storage: "memory", namespace: unique("free-twice"), onRestart: (e) => restarts.push(e.reason) };
  const other = await WowClient.connect(options);
  const client = await WowClient.connect(options);
  client.free();
  client.free();
  client[Symbol.dispose]();
  assert.throws(() => client.send({}), { name: "TypeError", message: "WowClient.send: the object was freed, or the method was called detached from it" });
  // A method detached from its client (destructured, or called on another object) says so, and stops nothing either.
  const { send } = other;
  assert.throws(() => send({}), { name: "TypeError", message: "WowClient.send: the object was freed, or the method was called detached from it" });
  assert.throws(() => other.intents.call({}), /WowClient\.intents: the object was freed, or the method was called detached/);
  // A static method needs no object: `connect` may be called detached (the web entry does).
  const { connect } = WowClient;
  (await connect(options)).free();
  const id = unique("acct");
  const result = await other.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } });
  assert.equal(result.errorCode, "Ok");
  assert.deepEqual(restarts, [], "no restart");
  other.free();
});

test("a large body is sent from the task after the caller's: copied when given, sends kept in the order given, an abort heard", async () => {
  const id = unique("acct");
  await createAccount(id);
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: memoryAdapter(), namespace: unique("large"),
    timeoutMs: 5_000 });
  // Over the size a send starts later at (128 KB of JSON).
  const large = { amount: 1, note: "x".repeat(200_000) };
  const lock = (body, extra = {}) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body, scope: "one", ...extra });
  const since = (await (await fetch(`${gateway.base}/__gateway/arrivals?since=0`)).json()).next;
  // Given in one task: the large one, then a small one of its scope.
  const first = client.send(lock(large));
  const second = client.send(lock({ amount: 2 }));
  large.note = "changed after send() returned";
  large.amount = 99;
  const [a, b] = await Promise.all([first, second]);
  assert.deepEqual([a.status, b.status], ["succeeded", "succeeded"], JSON.stringify([a, b]));
  const arrived = (await (await fetch(`${gateway.base}/__gateway/arrivals?since=${since}`)).json()).arrivals
    .filter((r) => [a.requestId, b.requestId].includes(r.requestId)).map((r) => r.requestId);
  assert.deepEqual(arrived, [a.requestId, b.requestId], "sent in the order given");
  const [record] = (await client.intents()).filter((r) => r.intentId === a.intentId);
  assert.equal(record.command.body.amount, 1, "the body as it was when send() was called");
  assert.equal(record.command.body.note.length, 200_000);
  // A caller that leaves before its send has started: its wait ends, the intent goes on.
  const controller = new AbortController();
  const left = client.sendAndWait(lock({ ...large, note: "y".repeat(200_000) }), { signal: controller.signal });
  controller.abort();
  const e = await left.then(() => assert.fail("not aborted"), (e) => e);
  assert.equal(e.code, "Aborted", String(e));
  // Its id is not known to a wait that ended before the record was written (as for any body).
  let third;
  for (let i = 0; i < 100 && third?.state !== "succeeded"; i++) {
    if (i) await new Promise((r) => setTimeout(r, 50));
    [third] = (await client.intents()).filter((r) => ![a.intentId, b.intentId].includes(r.intentId));
  }
  assert.equal(third?.state, "succeeded", "the intent was sent all the same");
  assert.equal(third.command.body.note, "y".repeat(200_000));
  client.free();
});

test("the module's own methods are not on the client: only the documented API is", async () => {
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory" });
  const names = [...Object.getOwnPropertyNames(WowClient), ...Object.getOwnPropertyNames(WowClient.prototype)];
  assert.deepEqual(names.filter((n) => n.startsWith("__") && n !== "__wbg_ptr" && !n.startsWith("__destroy") && !n.startsWith("__wrap")), [],
    names.join(", "));
  assert.equal("__reopen" in WowClient, false);
  assert.equal("__setAside" in client, false);
  client.free();
});
