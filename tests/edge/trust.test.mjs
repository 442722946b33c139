// The trust boundaries, tried as an attacker and as a new user would, in
// Node.js against the gateway: each test is one reproduction, and each
// fails on what the gateway (or another host) received, or on what storage
// kept, were the boundary not held. docs/security.md names each threat and
// the test here that proves the SDK holds it.
//   - an intent acts only for the user who made it (another user's client
//     never sends, resumes, lists or confirms it; a key of another user's is refused);
//   - a record changed in storage sends nothing anywhere (quarantined, with why);
//   - a redirect is never followed (a lost answer, confirmed first);
//   - no credential is stored (refused when given; taken out of an older record);
//   - a polluted Object.prototype is never read as the caller's options;
//   - a namespace is exact (a longer one sharing its prefix is not its);
//   - what another tab says is a hint (a forged "the one ahead succeeded"
//     sends nothing out of turn; a forged probe word is dropped and counted);
//   - an answer is read up to a bound, and a record keeps a bounded part of it;
//   - signing out parks or purges the user's intents under their locks, and says so;
//     a send made or still beginning while it runs sends nothing.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { arrivals as arrivalsAt, gatewayBesideAnotherHost } from "../support/neighbour.mjs";
import { WowClient } from "../../pkg/node.js";
import { memoryAdapter } from "../../pkg/adapters.js";

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

let gateway, other;
before(async () => { ({ gateway, other } = await gatewayBesideAnotherHost({ quiet: true })); });
after(async () => { await gateway?.stop(); await other?.close(); });
// A test that failed leaves no fault behind for the next.
afterEach(async () => { await gateway?.faults("DELETE"); });

const arrivals = (requestId) => arrivalsAt(gateway, requestId);

/** A client of `user` over `storage` in namespace `ns`; `token` names its credentials. */
function as(user, storage, ns, extra = {}) {
  return WowClient.connect({ baseUrl: gateway.base, user, storage, namespace: ns, timeoutMs: 2_000,
    retry: { baseMs: 20, maxMs: 50, maxConfirms: 2 }, headers: () => ({ Authorization: `Bearer ${user}` }), ...extra });
}

const create = (id, extra = {}) => ({ aggregate: { resource: "account", id }, action: "create_account", create: true,
  body: { name: id, balance: 10 }, ...extra });

/** Runs `f` while the runtime reports being offline: an intent is written and nothing is sent (`offline: "return"`). */
async function offline(f) {
  globalThis.navigator ??= {};
  const was = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", { configurable: true, value: { onLine: false } });
  try { return await f(); } finally { Object.defineProperty(globalThis, "navigator", was); }
}

test("an intent one user left is never sent with the next user's credentials: only its own user drives it", async () => {
  const storage = memoryAdapter(), ns = unique("device");
  const id = unique("acct");
  // Alice's command never reaches the bus and history cannot be asked: her intent is left unresolved.
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_request", times: 1 },
    { match: { path: "*/event/*" }, fault: "query_unavailable" }] });
  const alice = await as("alice", storage, ns);
  const left = await alice.send(create(id, { intentKey: `${id}/open` }));
  assert.ok(["unknown", "escalated"].includes(left.status), JSON.stringify(left));
  alice.free();
  await gateway.faults("DELETE");

  // Bob signs in on the same device: resume and the history probe drive only his own.
  const bob = await as("bob", storage, ns);
  const report = await bob.resume();
  await pause(300);
  await gateway.idle();
  const sent = await arrivals(left.requestId);
  assert.ok(sent.every((a) => a.authorization !== "Bearer bob"), `sent as Bob: ${JSON.stringify(sent)}`);
  assert.equal(sent.length, 1, "only Alice's first attempt reached the gateway");
  assert.deepEqual(report, { driven: [], busy: [] });
  // Bob sees nothing of it: not listed, not found, not confirmable, not withdrawable.
  assert.deepEqual(await bob.intents(), []);
  assert.equal(await bob.intent(left.intentId), null);
  const nobody = "01890000-0000-7000-8000-000000000000";
  for (const call of ["confirm", "withdraw", "retry"]) {
    const args = call === "retry" ? [{}] : [];
    const e = await bob[call](left.intentId, ...args).then(() => assert.fail("acted on Alice's intent"), (e) => e);
    const unknown = await bob[call](nobody, ...args).then(() => assert.fail("acted"), (e) => e);
    assert.equal(e.code, unknown.code, `${call}: as for an unknown id (${e.message})`);
    assert.ok(!e.message.includes(left.intentId) || unknown.message.includes(nobody), e.message);
  }
  // Bob's send under Alice's key is refused: nothing sent, nothing changed.
  const theirs = await bob.send(create(id, { intentKey: `${id}/open` })).then(() => assert.fail("sent"), (e) => e);
  assert.equal(theirs.code, "IntentOfAnotherUser", theirs.message);
  assert.equal((await arrivals(left.requestId)).length, 1);
  bob.free();

  // Alice back: her intent is hers again, confirmed first and sent once, with her credentials.
  const back = await as("alice", storage, ns);
  const resumed = await back.resume();
  assert.deepEqual(resumed.driven.map((o) => [o.intentId, o.status]), [[left.intentId, "succeeded"]]);
  const after = await arrivals(left.requestId);
  assert.ok(after.every((a) => a.authorization === "Bearer alice"), JSON.stringify(after));
  assert.equal(await gateway.stored("account", id, left.requestId), 1);
  back.free();
});

test("headers(), a confirmer and checkDownstream are told the user the request acts for", async () => {
  const asked = [];
  const client = await WowClient.connect({ baseUrl: gateway.base, user: "carol", storage: "memory", namespace: unique("ctx"),
    timeoutMs: 2_000, headers: (context) => { asked.push(context); return { Authorization: `Bearer ${context.user}` }; } });
  const id = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
  const outcome = await client.send(create(id));
  assert.equal(outcome.status, "succeeded");
  assert.deepEqual(asked[0], { user: "carol", purpose: "command", intentIds: [outcome.intentId] });
  assert.ok(asked.some((c) => c.purpose === "history" && c.user === "carol" && c.intentIds.includes(outcome.requestId)),
    JSON.stringify(asked));
  const answered = await client.send(create(unique("acct")));
  const snapshot = await client.awaitDownstream(answered.intentId, { stage: "SNAPSHOT", timeoutMs: 2_000 });
  assert.equal(snapshot.downstreamReached, "SNAPSHOT");
  assert.ok(asked.some((c) => c.purpose === "snapshot"), JSON.stringify(asked));
  // The zero-argument form keeps working.
  const plain = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: "memory", namespace: unique("ctx"),
    headers: () => ({ "X-Plain": "1" }) });
  assert.equal((await plain.send(create(unique("acct")))).status, "succeeded");
  client.free();
  plain.free();
});

test("a record changed in storage sends nothing anywhere: it is quarantined with the reason, nothing it carries leaves", async () => {
  const map = new Map(), ns = unique("tamper");
  const client = await as("dave", memoryAdapter(map), ns, { offline: "return" });
  const ids = [unique("acct"), unique("acct"), unique("acct"), unique("acct")];
  const written = [];
  for (const id of ids) written.push(await offline(() => client.send(create(id))));
  client.free();
  const key = (o) => `wow-intents/${ns}/${o.intentId}`;
  const edit = (o, f) => { const r = JSON.parse(map.get(key(o))); f(r); map.set(key(o), JSON.stringify(r)); };
  edit(written[0], (r) => { r.command.path = r.command.path.slice(1).replace(/^/, "7/"); });
  edit(written[1], (r) => { r.command.path = `/../..${r.command.path}`; });
  edit(written[2], (r) => { r.namespace = "someone-else"; });
  const before = other.received.length;

  const again = await as("dave", memoryAdapter(map), ns);
  const report = await again.resume();
  await gateway.idle();
  assert.equal(other.received.length, before, `the other host received: ${JSON.stringify(other.received.slice(before))}`);
  for (const o of written.slice(0, 3)) assert.deepEqual(await arrivals(o.requestId), [], "nothing reached the gateway either");
  assert.deepEqual(report.driven.map((o) => o.intentId), [written[3].intentId], "only the untouched one is driven");
  const quarantined = await again.quarantined();
  const reason = (o) => quarantined.find((q) => q.key.endsWith(o.intentId))?.reason ?? "";
  assert.match(reason(written[0]), /path `7\/account\/.*` must start with `\/`/);
  assert.match(reason(written[1]), /holds a dot segment/);
  assert.match(reason(written[2]), /its namespace is not the one it was read in/);
  // Said once: the reason kept beside the entry is read back as it was stored.
  for (const o of written.slice(0, 3)) assert.match(reason(o), /^corrupt record: (?!corrupt record)/);
  // Moved aside, never dropped: still there to read, and no longer driven.
  assert.ok([...map.keys()].some((k) => k.startsWith(`wow-intents-quarantine/${ns}/`)));
  again.free();
});

test("a redirect is never followed: the command goes nowhere else, and the answer counts as lost (confirmed first)", async () => {
  const id = unique("acct"), ns = unique("redirect"), storage = memoryAdapter();
  const to = `${other.base}/account/create_account`;
  // History cannot be asked at first: the refused redirect's answer stays unknown, and says why.
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "redirect", location: to, times: 1 },
    { match: { path: "*/event/*" }, fault: "query_unavailable" }] });
  const before = other.received.length;
  const client = await as("erin", storage, ns);
  const lost = await client.send(create(id));
  assert.equal(other.received.length, before, `re-posted to the redirect's host: ${JSON.stringify(other.received.slice(before))}`);
  assert.ok(["unknown", "escalated"].includes(lost.status), JSON.stringify(lost));
  assert.equal(lost.attempts, 1, "never sent again before history answers");
  const said = lost.error.errorMsg;
  assert.match(said, new RegExp(`redirect \\(307\\) was refused \\(to ${to.replace(/[.]/g, "\\.")}\\)`), said);
  assert.equal(other.received.length, before, `re-posted to the redirect's host: ${JSON.stringify(other.received.slice(before))}`);
  // History answers: not appended, so sent again with the same requestId, once.
  await gateway.faults("DELETE");
  const { driven } = await client.resume();
  assert.deepEqual(driven.map((o) => [o.status, o.attempts]), [["succeeded", 2]]);
  assert.equal(await gateway.stored("account", id, lost.requestId), 1);
  assert.equal(other.received.length, before);
  client.free();
});

test("no credential is stored: a command carrying one is refused, and one an older record carries is taken out of storage", async () => {
  const map = new Map(), ns = unique("creds");
  const client = await as("frank", memoryAdapter(map), ns, { secretHeaders: ["X-Api-Key"] });
  for (const [name, value] of [["Authorization", "Bearer stolen"], ["cookie", "session=stolen"], ["X-API-KEY", "stolen"]]) {
    const id = unique("acct");
    const e = await client.send(create(id, { headers: { [name]: value } })).then(() => assert.fail("accepted"), (e) => e);
    assert.ok(e instanceof TypeError, String(e));
    assert.match(e.message, new RegExp(`command\\.headers\\.${name} is a credential.*connect\\(\\{ headers \\}\\)`));
    assert.deepEqual(await gateway.history("account", id), []);
  }
  assert.ok(![...map.values()].some((v) => v.includes("stolen")), "nothing of it was written");
  // A record an older build wrote with a credential in it: read, the credential leaves storage, and is never sent.
  const id = unique("acct");
  const pending = await offline(() => WowClient.connect({ baseUrl: gateway.base, user: "frank", storage: memoryAdapter(map),
    namespace: ns, offline: "return" }).then((c) => c.send(create(id))));
  const key = `wow-intents/${ns}/${pending.intentId}`;
  const old = JSON.parse(map.get(key));
  old.command.headers = [["Authorization", "Bearer stolen"], ["Command-Header-Trace", "t-1"]];
  map.set(key, JSON.stringify(old));
  const reader = await as("frank", memoryAdapter(map), ns);
  assert.ok(!map.get(key).includes("stolen"), "taken out at the first read (connect lists the journal)");
  assert.deepEqual(JSON.parse(map.get(key)).command.headers, [["Command-Header-Trace", "t-1"]]);
  const resumed = await reader.resume();
  assert.equal(resumed.driven[0]?.status, "succeeded", JSON.stringify(resumed));
  assert.deepEqual((await arrivals(pending.requestId)).map((a) => a.authorization), ["Bearer frank"]);
  client.free();
  reader.free();
});

test("a polluted Object.prototype is never read as the caller's: no inherited headers, confirmer or adapter method", async () => {
  const id = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_request", times: 1 }] });
  const storage = memoryAdapter();
  delete storage.compareAndSet;
  let client, outcome, records;
  try {
    Object.prototype.headers = () => ({ Authorization: "Bearer polluted" });
    Object.prototype.confirm = () => ({ appended: true });
    Object.prototype.compareAndSet = () => true;
    client = await WowClient.connect({ baseUrl: gateway.base, user: null, storage, namespace: unique("proto"),
      timeoutMs: 2_000, retry: { baseMs: 20 } });
    outcome = await client.send(create(id));
    records = await client.intents();
  } finally {
    delete Object.prototype.headers;
    delete Object.prototype.confirm;
    delete Object.prototype.compareAndSet;
  }
  // Not "appended" by the inherited confirmer: history said not appended, and it was sent again.
  assert.equal(outcome.status, "succeeded", JSON.stringify(outcome));
  assert.equal(outcome.attempts, 2, JSON.stringify(outcome));
  assert.equal(await gateway.stored("account", id, outcome.requestId), 1);
  assert.deepEqual((await arrivals(outcome.requestId)).map((a) => a.authorization), [null, null], "no inherited header sent");
  assert.equal(records.length, 1, "the adapter's own methods wrote it (no inherited compareAndSet)");
  client.free();
});

test("a namespace is exact: one sharing its prefix is never listed, driven, counted or cleared", async () => {
  const map = new Map();
  const alice = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace: "acme/alice",
    offline: "return" });
  const hers = await offline(() => alice.send(create(unique("acct"))));
  const acme = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace: "acme" });
  assert.deepEqual(await acme.intents(), []);
  assert.deepEqual(await acme.quarantined(), []);
  assert.deepEqual((await acme.resume()).driven, []);
  const cleared = await acme.clear();
  assert.equal(cleared.removed, 0);
  assert.ok(map.has(`wow-intents/acme/alice/${hers.intentId}`), "the other namespace's record is still there");
  assert.deepEqual(await arrivals(hers.requestId), []);
  alice.free();
  acme.free();
});

test("what another tab says is a hint: a forged 'the one ahead succeeded' sends nothing out of turn", async () => {
  const ns = unique("forge"), id = unique("acct");
  const client = await as(null, "memory", ns, { headers: undefined, timeoutMs: 6_000 });
  await client.sendAndWait(create(id));
  // The first of the scope is held on its way (the gateway delays it); the second waits its turn.
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "delay", delayMs: 1_500, times: 1 }] });
  const lock = (amount) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount }, scope: `account:${id}` });
  let firstId;
  const first = client.send(lock(1), { onIntent: (i) => { firstId = i; } });
  let secondId;
  const second = client.send(lock(2), { onIntent: (i) => { secondId = i; } });
  while (!firstId || !secondId) await pause(10);
  await pause(100);
  const forger = new BroadcastChannel(`wow-command-client/${ns}`);
  forger.postMessage({ intentId: firstId, state: "succeeded", revision: 99, version: 1, user: null });
  await pause(400);
  assert.deepEqual(await arrivals(secondId), [], "the second was not sent while the first was still on its way");
  forger.close();
  const [a, b] = await Promise.all([first, second]);
  assert.deepEqual([a.status, b.status], ["succeeded", "succeeded"]);
  const history = await gateway.history("account", id);
  assert.deepEqual(history.slice(-2), [a.requestId, b.requestId], "in their turn");
  client.free();
});

test("a forged word on the history probe's channel is dropped and counted: it never silences history", async () => {
  const ns = unique("probe"), id = unique("acct");
  const client = await as(null, "memory", ns, { headers: undefined });
  const forger = new BroadcastChannel(`wow-command-client-history/${ns}`);
  const now = Date.now();
  forger.postMessage({ history: true, source: gateway.base, from: 7, available: false, since: now, nextLookAt: now + 86_400_000, failures: 1 });
  forger.postMessage("not a probe's word at all");
  await pause(200);
  forger.close();
  assert.equal(client.history.available, true, JSON.stringify(client.history));
  assert.equal(client.history.droppedMessages, 2, JSON.stringify(client.history));
  // History is asked at once, not a day from now: a lost answer is confirmed.
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
  const outcome = await client.send(create(id));
  assert.equal(outcome.status, "succeeded", JSON.stringify(outcome));
  client.free();
});

test("an answer is read up to a bound, and a record keeps a bounded part of it", async () => {
  const map = new Map(), ns = unique("large");
  const client = await as(null, memoryAdapter(map), ns, { headers: undefined });
  // Larger than any Wow answer (8 MiB by default): read no further, the answer counts as lost and history confirms it.
  const huge = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: huge }, fault: "large_answer", bytes: 9 << 20, times: 1 }] });
  const lost = await client.send(create(huge));
  assert.equal(lost.status, "succeeded", JSON.stringify(lost));
  assert.equal(lost.attempts, 1, "appended, so never sent again");
  assert.equal(await gateway.stored("account", huge, lost.requestId), 1);
  // Within the bound, the caller's outcome has it whole, and the record keeps a bounded part.
  const large = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: large }, fault: "large_answer", bytes: 1 << 20, times: 1 }] });
  const whole = await client.send(create(large));
  assert.equal(whole.result.result.padding.length, 1 << 20);
  const stored = map.get(`wow-intents/${ns}/${whole.intentId}`);
  assert.ok(stored.length < 100_000, `${stored.length} characters stored`);
  assert.ok([...map.values()].every((v) => v.length < 100_000));
  client.free();
});

test("signing out parks the user's unresolved intents (driven again when they return) or purges them, under their locks, and says so", async () => {
  const map = new Map(), ns = unique("signout"), stuck = unique("acct"), done = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: stuck }, fault: "drop_request", times: 1 },
    { match: { path: "*/event/*" }, fault: "query_unavailable" }] });
  const grace = await as("grace", memoryAdapter(map), ns);
  const settled = await grace.send(create(done));
  const open = await grace.send(create(stuck));
  assert.equal(settled.status, "succeeded");
  assert.ok(["unknown", "escalated"].includes(open.status), JSON.stringify(open));
  const parked = await grace.signOut();
  assert.deepEqual(parked, { removed: 1, unresolved: [], parked: 1, busy: [] });
  const freed = await grace.intents().then(() => assert.fail("still open"), (e) => e);
  assert.equal(freed.code, "ClientFreed");
  assert.deepEqual([...map.keys()].map((k) => k.split("/").pop()), [open.intentId], "the unresolved one is kept");
  await gateway.faults("DELETE");

  // Back, she drives it herself; then a purge removes everything of hers and reports what was unresolved.
  const back = await as("grace", memoryAdapter(map), ns);
  assert.equal((await back.resume()).driven[0].status, "succeeded");
  const another = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: another }, fault: "drop_request", times: 1 },
    { match: { path: "*/event/*" }, fault: "query_unavailable" }] });
  const left = await back.send(create(another));
  const purged = await back.signOut({ purge: true });
  await gateway.faults("DELETE");
  assert.equal(purged.removed, 2);
  assert.deepEqual(purged.unresolved.map((r) => r.intentId), [left.intentId]);
  assert.equal(map.size, 0, "nothing of hers is left on this device");
  // A mistake in the options is a TypeError.
  const other = await as("heidi", memoryAdapter(map), ns);
  await assert.rejects(other.signOut({ purge: "yes" }), (e) => e instanceof TypeError && /options\.purge must be true or false/.test(e.message));
  const cleared = await other.clear();
  assert.deepEqual(cleared, { removed: 0, unresolved: [], parked: 0, busy: [] });
  assert.equal((await other.send(create(unique("acct")))).status, "succeeded", "clear() keeps the client open");
  other.free();
});

test("a send made while its user signs out is refused, one still beginning sends nothing, and a purge leaves nothing of either", async () => {
  const map = new Map(), ns = unique("leaving"), early = unique("acct"), late = unique("acct");
  const judy = await as("judy", memoryAdapter(map), ns);
  // A keyed send begins (its key's record is read first), and the purge starts before it is written.
  const begun = judy.sendAndWait(create(early, { intentKey: `${early}/open` })).then(() => assert.fail("sent"), (e) => e);
  const purge = judy.signOut({ purge: true });
  const refused = await judy.send(create(late)).then(() => assert.fail("sent"), (e) => e);
  assert.equal(refused.code, "SigningOut", refused.message);
  assert.deepEqual([refused.outcome, refused.appended], ["rejected", false]);
  const report = await purge;
  const stopped = await begun;
  assert.equal(stopped.code, "SigningOut", stopped.message);
  await gateway.idle();
  for (const id of [early, late]) {
    const r = await fetch(`${gateway.base}/__gateway/arrivals?contains=${id}`);
    assert.deepEqual((await r.json()).arrivals, [], `${id} reached the gateway during the sign-out`);
  }
  assert.deepEqual(report.busy, [], "its own send is no other tab's");
  assert.equal(map.size, 0, "nothing of hers is left on this device");
});

test("adopt(): the intents an app without sign-in left become the signed-in user's, once, on the app's word", async () => {
  const map = new Map(), ns = unique("adopt");
  const anonymous = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace: ns,
    offline: "return" });
  const cart = await offline(() => anonymous.send(create(unique("acct"))));
  anonymous.free();
  const ivan = await as("ivan", memoryAdapter(map), ns);
  assert.deepEqual(await ivan.intents(), [], "not his until the app says so");
  assert.equal(await ivan.adopt(), 1);
  const [record] = await ivan.intents();
  assert.deepEqual([record.intentId, record.user], [cart.intentId, "ivan"]);
  assert.equal((await ivan.resume()).driven[0].status, "succeeded");
  assert.deepEqual((await arrivals(cart.requestId)).map((a) => a.authorization), ["Bearer ivan"]);
  ivan.free();
});

test("a scheduler set after the module loaded is never handed the module's work: a large journal is still read in slices", async () => {
  const map = new Map(), namespace = unique("sched");
  const options = { baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace, timeoutMs: 5_000 };
  const first = await WowClient.connect(options);
  const id = unique("acct");
  await first.send(create(id));
  const [template] = await first.intents();
  first.free();
  const [key] = map.keys();
  const prefix = key.slice(0, -template.intentId.length);
  map.clear();
  // More than one slice of records to hand out (64 a task).
  for (let i = 0; i < 300; i++) {
    const intentId = `${template.intentId.slice(0, 24)}${String(i).padStart(12, "0")}`;
    map.set(prefix + intentId, JSON.stringify({ ...template, intentId, requestId: intentId, revision: 1 }));
  }
  let handed = 0, listed;
  const had = Object.getOwnPropertyDescriptor(globalThis, "scheduler");
  try {
    // A page script's scheduler that keeps what it is given and never runs it.
    globalThis.scheduler = { postTask: () => { handed++; return new Promise(() => {}); } };
    const list = async () => {
      const client = await WowClient.connect(options);
      try { return await client.intents(); } finally { client.free(); }
    };
    listed = await Promise.race([list(), pause(10_000).then(() => "hung")]);
  } finally {
    if (had) Object.defineProperty(globalThis, "scheduler", had); else delete globalThis.scheduler;
  }
  assert.notEqual(listed, "hung", "the listing waited on the page's scheduler");
  assert.equal(listed.length, 300);
  assert.equal(handed, 0);
});
