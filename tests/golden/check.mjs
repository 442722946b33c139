// The build under test meets a golden fixture, through its public API, in a
// page or a runtime (tests/golden/golden.test.mjs judges what it reports):
// it reads a store written by an earlier build, recognises the keyed intents
// in it, refuses a changed payload, reports the settled ones without sending,
// resumes the unsettled ones (confirming first), moves damaged entries aside
// and leaves a newer build's record alone; and it derives the same requestIds
// and payload fingerprints. Every call to the package is made here; nothing
// is judged here.
import { getRaw, seed } from "./stores.mjs";

/**
 * Runs `f` while the runtime reports being offline: a keyed intent is then
 * written and its drive ends at once with nothing sent (`offline: "return"`).
 */
export async function offline(f) {
  if (globalThis.navigator === undefined) {
    globalThis.navigator = { onLine: false };
    try { return await f(); } finally { delete globalThis.navigator; }
  }
  const proto = Object.getPrototypeOf(globalThis.navigator);
  const property = Object.getOwnPropertyDescriptor(proto, "onLine");
  Object.defineProperty(proto, "onLine", { configurable: true, get: () => false });
  try { return await f(); } finally {
    if (property) Object.defineProperty(proto, "onLine", property);
    else delete proto.onLine;
  }
}

const summary = (o) => ({ status: o.status, intentId: o.intentId, requestId: o.requestId, attempts: o.attempts,
  appended: o.appended, code: o.error?.errorCode ?? null });
const failure = (e) => ({ error: e?.code ?? String(e) });

/** The requestIds and create aggregate ids the build derives for `ids` (request-ids.json). */
export async function deriveIds({ WowClient }, ids) {
  const out = [];
  for (const { namespace, intentKey } of ids) {
    const c = await WowClient.connect({ user: null, baseUrl: "http://127.0.0.1:9", storage: "memory", namespace, offline: "return" });
    try {
      const outcome = await offline(() => c.send({ aggregate: { resource: "account" }, action: "create_account", create: true,
        body: {}, intentKey }));
      const [record] = await c.intents();
      out.push({ requestId: outcome.requestId, aggregateId: record.aggregate.aggregateId });
    } catch (e) {
      out.push(failure(e));
    } finally {
      c.free();
    }
  }
  return out;
}

/** The fingerprints the build gives fingerprints.json's commands under their keys. */
export async function fingerprints({ WowClient }, { namespace, cases }) {
  const c = await WowClient.connect({ user: null, baseUrl: "http://127.0.0.1:9", storage: "memory", namespace, offline: "return" });
  const out = [];
  for (const { command, body, intentKey } of cases) {
    try {
      const outcome = await offline(() => c.send({ ...command, body: JSON.parse(body), intentKey }));
      out.push({ fingerprint: (await c.intents()).find((r) => r.intentId === outcome.intentId).fingerprint });
    } catch (e) {
      out.push(failure(e));
    }
  }
  c.free();
  return out;
}

/**
 * Seeds an empty store with `fixture.store`, then lets the build read and
 * drive it against the gateway at `base`; resolves to what it saw.
 */
export async function readStore({ WowClient, IdempotentConsumer }, fixture, base) {
  const { namespace } = fixture.store;
  const adapter = await seed(fixture.store);
  const storage = adapter ?? fixture.store.kind;
  const seen = {};
  // Nothing it does may reach a gateway: replays of settled intents and refusals.
  // The user the fixture's intents were made under: none before schema 4.
  const user = fixture.store.user ?? null;
  const offlineClient = await WowClient.connect({ user, baseUrl: "http://127.0.0.1:9", storage, namespace, resume: false,
    timeoutMs: 2_000, retry: { maxAttempts: 1, maxConfirms: 1, baseMs: 10 } });
  const client = await WowClient.connect({ user, baseUrl: base, storage, namespace, resume: false, timeoutMs: 10_000,
    retry: { baseMs: 20 } });

  seen.listed = await client.intents();
  seen.quarantined = (await client.quarantined()).map((q) => q.key);
  seen.damaged = {};
  for (const d of fixture.damaged) {
    seen.damaged[d.name] = { afterListing: await getRaw(fixture.store.kind, namespace, adapter, d) };
  }

  seen.replays = {};
  for (const c of fixture.cases.filter((c) => c.expect === "replayed")) {
    const again = await offlineClient.send(c.command).then(summary, failure);
    const changed = await offlineClient.send({ ...c.command, body: { ...c.command.body, changedByTheCheck: true } })
      .then(summary, failure);
    seen.replays[c.name] = { again, changed };
  }

  seen.sentAgain = {};
  for (const c of fixture.cases.filter((c) => c.expect === "sent-again")) {
    seen.sentAgain[c.name] = await client.send(c.command).then(summary, failure);
  }

  // What the closed tab sent and whose answer it lost is in history already.
  for (const c of fixture.cases.filter((c) => c.expect === "confirmed")) {
    const r = seen.listed.find((x) => x.intentId === c.intentId);
    const response = await fetch(`${base}${r.command.path}`, { method: r.command.method, headers: {
      "Content-Type": "application/json", "Command-Aggregate-Id": r.aggregate.aggregateId, "Command-Request-Id": r.requestId },
    body: JSON.stringify(r.command.body) });
    if (!response.ok) throw new Error(`the check's own append answered ${response.status}`);
  }
  const report = await client.resume();
  seen.resumed = { driven: report.driven.map(summary), busy: report.busy };
  seen.after = await client.intents();

  // Each effect record delivered again: a done one is skipped; one that was
  // started and never recorded done goes to reconciliation, which here
  // answers "done" (started) or "run" (failed).
  const consumer = await IdempotentConsumer.open({ storage, namespace });
  const reconcile = { skipped: undefined, reconciled: () => ({ done: "reconciled by the check" }), "run-again": () => "run" };
  seen.effects = {};
  for (const e of fixture.effects) {
    let ran = 0;
    seen.effects[e.name] = await consumer.handle(e.identity, () => { ran += 1; return "ran again"; }, { reconcile: reconcile[e.expect] })
      .then((o) => ({ status: o.status, result: o.result }), failure);
    seen.effects[e.name].ran = ran;
  }
  seen.effectRecords = (await consumer.records()).map((r) => r.identity).sort();
  for (const d of fixture.damaged) seen.damaged[d.name].atEnd = await getRaw(fixture.store.kind, namespace, adapter, d);
  seen.quarantinedAfter = (await client.quarantined()).map((q) => q.key);
  client.free();
  offlineClient.free();
  consumer.free();
  return seen;
}
