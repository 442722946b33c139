// The generator's page side (scripts/golden-fixtures.mjs): today's build,
// loaded from /pkg/ on the test gateway's origin, writes intents in every
// state a record can be left in (settled ones, and the unsettled ones a tab
// leaves when it is closed: pending, sending, unknown, escalated) and the
// consumer's effect records; damaged entries are added raw; then each store
// is dumped as it holds them. Also computes the derived requestIds and the
// fingerprints of cases.mjs through the same build.
import { dump, putRaw } from "./stores.mjs";
import { fingerprintInputs, requestIdInputs } from "./cases.mjs";

const base = location.origin;
const later = (ms) => new Promise((r) => setTimeout(r, ms));

async function pkg() {
  const client = await import("/pkg/index.js");
  await client.default();
  const consumer = await import("/pkg/consumer-web.js");
  await consumer.default();
  return { WowClient: client.WowClient, IdempotentConsumer: consumer.IdempotentConsumer };
}

async function fault(rules) {
  const r = await fetch(`${base}/__gateway/faults`, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ rules }) });
  if (!r.ok) throw new Error(`fault control answered ${r.status}`);
}

/** Runs `f` while the page reports being offline (what the client checks before a send). */
async function offline(f) {
  const property = Object.getOwnPropertyDescriptor(Navigator.prototype, "onLine");
  Object.defineProperty(Navigator.prototype, "onLine", { configurable: true, get: () => false });
  try {
    return await f();
  } finally {
    Object.defineProperty(Navigator.prototype, "onLine", property);
  }
}

/** Polls until the record of `intentId` is in `state`; resolves to it. */
async function inState(client, intentId, state) {
  for (let i = 0; i < 300; i++) {
    const record = (await client.intents()).find((r) => r.intentId === intentId);
    if (record?.state === state) return record;
    await later(50);
  }
  throw new Error(`intent ${intentId} never reached ${state}`);
}

/** Who the intents are written for (a build before users wrote them for nobody: `user` null when read). */
const USER = "golden-user";

/** Writes the intents and effects of one store kind; resolves to `{ cases, effects, damaged, dump }`. */
export async function writeStore({ kind, namespace }) {
  const { WowClient, IdempotentConsumer } = await pkg();
  const { mapAdapter } = await import("./stores.mjs");
  const adapter = kind === "adapter" ? mapAdapter() : undefined;
  const storage = adapter ?? kind;
  const connect = (extra = {}) => WowClient.connect({ user: USER, baseUrl: base, storage, namespace, timeoutMs: 5_000,
    retry: { baseMs: 20, maxConfirms: 1 }, ...extra });
  const id = (name) => `${namespace}-${name}`;
  const client = await connect();
  const cases = [];
  const record = async (name, command, expect, outcome) => {
    const r = (await client.intents()).find((x) => x.intentId === outcome.intentId);
    cases.push({ name, expect, command, intentId: outcome.intentId, state: r.state });
  };
  const create = (name, extra = {}) => ({ aggregate: { resource: "account", id: id(name) }, action: "create_account",
    create: true, body: { name: `golden ${name}`, balance: 100 }, ...extra });

  // Unsettled: a keyed create written while offline, never sent.
  {
    const command = create("pending", { intentKey: "pending" });
    const c = await connect({ offline: "return" });
    const outcome = await offline(() => c.send(command));
    cases.push({ name: "pending", expect: "resumed", command, intentId: outcome.intentId,
      state: (await inState(client, outcome.intentId, "pending")).state });
    c.free();
  }

  // Settled.
  const opened = await client.send({ aggregate: { resource: "account" }, action: "create_account", create: true,
    body: { name: "golden derived id", balance: 100 }, intentKey: "open-derived" });
  await record("succeeded-derived-id", { aggregate: { resource: "account" }, action: "create_account", create: true,
    body: { name: "golden derived id", balance: 100 }, intentKey: "open-derived" }, "replayed", opened);
  const account = create("account");
  await record("succeeded-keyless", account, "listed", await client.send(account));

  const lock = { aggregate: { resource: "account", id: id("account") }, action: "lock_amount", body: { amount: 1, note: "ünï 🧾", rate: 0.1 + 0.2 },
    waitStage: "SNAPSHOT", intentKey: "lock-streamed" };
  const stream = client.sendAndWaitStream(lock);
  for await (const _ of stream);
  await record("succeeded-stream", lock, "replayed", await stream.outcome);

  const conflict = { aggregate: { resource: "account", id: id("account") }, action: "lock_amount", body: { amount: 2 },
    expectedVersion: 99, intentKey: "lock-conflict" };
  await record("conflict", conflict, "replayed", await client.send(conflict));

  const freeze = { aggregate: { resource: "account", id: id("account") }, action: "freeze_account", body: { reason: "first" } };
  await client.send(freeze);
  const again = { ...freeze, body: { reason: "again" }, intentKey: "freeze-again" };
  await record("rejected", again, "replayed", await client.send(again));

  await fault([{ match: { aggregateId: id("refused") }, fault: "reject_before_send", times: 1 }]);
  const refused = create("refused", { intentKey: "refused" });
  await record("rejected-before-the-bus", refused, "sent-again", await client.send(refused));

  // Every optional field a record can hold. A lost answer to a SNAPSHOT
  // wait, confirmed from history with its version (appendedVersion); a
  // tenant's and owner's create with a persisted header.
  await fault([{ match: { aggregateId: id("account") }, fault: "drop_response_after_append", times: 1 }]);
  const facts = { aggregate: { resource: "account", id: id("account") }, action: "unlock_amount", body: { amount: 1 },
    waitStage: "SNAPSHOT", intentKey: "unlock-confirmed" };
  await record("succeeded-confirmed-with-facts", facts, "replayed", await client.send(facts));
  const owned = { aggregate: { resource: "account", id: id("owned"), tenantId: "golden-tenant", ownerId: "golden-owner" },
    action: "create_account", create: true, body: { name: "golden owned", balance: 1 },
    headers: { "Command-Header-Golden": "kept with the intent" }, intentKey: "owned" };
  await record("succeeded-tenant-owner-header", owned, "replayed", await client.send(owned));

  // Unsettled: history cannot be asked after a lost answer (escalated);
  // an answer lost while the caller's own confirmation never answers
  // (unknown); an attempt still on the wire (sending).
  await fault([
    { match: { aggregateId: id("escalated") }, fault: "drop_response_after_append", times: 1 },
    { match: { path: "/account/event/*" }, fault: "query_unavailable" },
  ]);
  const escalated = create("escalated", { intentKey: "escalated" });
  await record("escalated", escalated, "resumed", await client.send(escalated));

  const unknown = create("unknown", { intentKey: "unknown" });
  await fault([{ match: { aggregateId: id("unknown") }, fault: "drop_response_after_append", times: 1 }]);
  const hanging = await connect({ confirm: () => new Promise(() => {}), callbackTimeoutMs: 0 });
  const unknownId = await new Promise((resolve) => { hanging.send(unknown, { onIntent: resolve }); });
  cases.push({ name: "unknown", expect: "confirmed", command: unknown, intentId: unknownId,
    state: (await inState(client, unknownId, "unknown")).state });

  const sending = create("sending", { intentKey: "sending" });
  await fault([{ match: { aggregateId: id("sending") }, fault: "delay", delayMs: 600_000, times: 1 }]);
  const slow = await connect({ timeoutMs: 600_000, waitTimeoutMs: 600_000 });
  const sendingId = await new Promise((resolve) => { slow.send(sending, { onIntent: resolve }); });
  cases.push({ name: "sending", expect: "resumed", command: sending, intentId: sendingId,
    state: (await inState(client, sendingId, "sending")).state });

  // Unsettled, with the wait filters and a context alias (a route this
  // gateway does not serve): written offline, refused when it is sent.
  {
    const command = { aggregate: { contextAlias: "golden", resource: "account", id: id("every-field"), tenantId: "golden-tenant",
      ownerId: "golden-owner" }, action: "create_account", create: true, body: { name: "every field", balance: 1 },
    waitStage: "SAGA_HANDLED", waitTailStage: "PROJECTED", waitContext: "golden-context", waitProcessor: "golden-processor",
    waitFunction: "golden-function", waitTimeoutMs: 4_321, headers: { "Command-Header-Golden": "1" }, intentKey: "every-field" };
    const c = await connect({ offline: "return" });
    const outcome = await offline(() => c.send(command));
    cases.push({ name: "pending-every-field", expect: "resumed", outcome: "rejected", command, intentId: outcome.intentId,
      state: (await inState(client, outcome.intentId, "pending")).state });
    c.free();
  }

  // The consumer's records: one done with its result, one whose effect
  // threw (its error kept), one started whose effect never returned.
  const consumer = await IdempotentConsumer.open({ storage, namespace });
  const effects = [];
  const done = await consumer.handle("effect-done", () => ({ n: 1, note: "ünï 🧾", rate: 0.1 + 0.2 }));
  effects.push({ name: "done", identity: "effect-done", expect: "skipped", result: done.result });
  await consumer.handle("effect-failed", () => { throw new Error("golden failure"); }).catch(() => {});
  effects.push({ name: "failed", identity: "effect-failed", expect: "run-again" });
  consumer.handle("effect-started", () => new Promise(() => {}), { effectTimeoutMs: 600_000 }).catch(() => {});
  for (let i = 0; i < 100 && !(await consumer.find("effect-started")); i++) await later(20);
  effects.push({ name: "started", identity: "effect-started", expect: "reconciled" });

  // Damaged entries, added raw beside what the build wrote.
  const sample = (await client.intents()).find((r) => r.intentId === opened.intentId);
  const damaged = [];
  const place = (area, entryId, aside = false) => ({
    key: `wow-${area}${aside ? "-quarantine" : ""}/${namespace}/${entryId}`,
    store: aside ? "quarantine" : area,
    id: aside && area !== "intents" ? `${area}/${entryId}` : entryId,
  });
  const text = kind !== "indexedDB";
  const variant = (entryId, change) => {
    const r = { ...structuredClone(sample), intentId: entryId, requestId: entryId };
    change(r);
    return text ? JSON.stringify(r) : r;
  };
  const add = async (name, area, entryId, value, expect, aside = false) => {
    const where = place(area, entryId, aside);
    await putRaw(kind, namespace, adapter, { ...where, value });
    damaged.push({ name, area, id: entryId, ...where, expect });
  };
  await add("torn-write", "intents", "damaged-torn", text ? JSON.stringify(sample).slice(0, 60) : "not a record", "quarantined");
  await add("not-an-object", "intents", "damaged-number", text ? "42" : 42, "quarantined");
  await add("no-schema-version", "intents", "damaged-no-schema", variant("damaged-no-schema", (r) => { delete r.schemaVersion; }), "quarantined");
  await add("schema-version-0", "intents", "damaged-schema-0", variant("damaged-schema-0", (r) => { r.schemaVersion = 0; }), "quarantined");
  await add("state-not-a-name", "intents", "damaged-state-7", variant("damaged-state-7", (r) => { r.state = 7; }), "quarantined");
  await add("unknown-state", "intents", "damaged-state-paused", variant("damaged-state-paused", (r) => { r.state = "paused"; }), "quarantined");
  await add("missing-field", "intents", "damaged-no-command", variant("damaged-no-command", (r) => { delete r.command; }), "quarantined");
  await add("future-schema", "intents", "future-schema", variant("future-schema", (r) => { r.schemaVersion = SCHEMA_FROM_THE_FUTURE; r.addedLater = { x: 1 }; }), "untouched");
  await add("quarantined-earlier", "intents", "damaged-earlier",
    kind === "indexedDB" ? { value: "{\"torn", at: 1_764_000_000_000 } : "{\"torn", "reported", true);
  await add("effect-unknown-state", "effects", "damaged-effect", text ? JSON.stringify({ ...(await consumer.find("effect-done")), identity: "damaged-effect", state: "maybe" })
    : { ...(await consumer.find("effect-done")), identity: "damaged-effect", state: "maybe" }, "quarantined");

  const stored = await dump(kind, namespace, adapter);
  // The user the intents were made under (schema 4 on): a later build reads them as that user.
  return { cases, effects, damaged, store: { ...stored, user: USER } };
}

/** A schema version no build has written yet: a record from a newer build. */
const SCHEMA_FROM_THE_FUTURE = 1_000;

/** The derived requestIds (and a create's derived aggregate id) of cases.mjs, as the build derives them. */
export async function deriveIds() {
  const { WowClient } = await pkg();
  const ids = [];
  for (const [namespace, intentKey] of requestIdInputs) {
    const c = await WowClient.connect({ user: null, baseUrl: base, storage: "memory", namespace, offline: "return" });
    const outcome = await offline(() => c.send({ aggregate: { resource: "account" }, action: "create_account", create: true,
      body: {}, intentKey }));
    const [r] = await c.intents();
    ids.push({ namespace, intentKey, requestId: outcome.requestId, aggregateId: r.aggregate.aggregateId });
    c.free();
  }
  return ids;
}

/** The fingerprints of cases.mjs's bodies under their keys, with what the record stored of the command. */
export async function fingerprints(namespace) {
  const { WowClient } = await pkg();
  const c = await WowClient.connect({ user: null, baseUrl: base, storage: "memory", namespace, offline: "return" });
  const out = [];
  for (const [name, command, body] of fingerprintInputs) {
    const outcome = await offline(() => c.send({ ...command, body: JSON.parse(body), intentKey: name }));
    const r = (await c.intents()).find((x) => x.intentId === outcome.intentId);
    out.push({ name, intentKey: name, command, body, fingerprint: r.fingerprint,
      stored: { aggregate: r.aggregate, command: { method: r.command.method, path: r.command.path,
        expectedVersion: r.command.expectedVersion ?? null, create: r.command.create } } });
  }
  c.free();
  return out;
}
