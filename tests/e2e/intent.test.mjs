// The intent outlives the caller's wait, in real Chromium against the test
// gateway: an abort ends only the wait (the same client finishes the intent,
// or resume() in a new page does), an offline runtime spends no budget and
// sends once back online, an escalated intent is confirmed again on its own,
// and a downstream stage is awaited without resending.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";

const env = gatewayAndChromium({ quiet: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function createAccount() {
  const id = unique("acct");
  const r = await fetch(`${env.gateway.base}/account/create_account`, {
    method: "POST", headers: { "Content-Type": "application/json", "Command-Aggregate-Id": id },
    body: JSON.stringify({ name: id, balance: 1_000_000 }) });
  assert.equal(r.status, 200);
  return id;
}

/** Streams of `id` carrying `requestId`, from the gateway's query API. */
const stored = (id, requestId) => env.gateway.stored("account", id, requestId);

/** A page with `window.client` connected over IndexedDB in namespace `ns`; `extra` is source for more options. */
async function openClient(context, ns, extra = "{}") {
  const page = await context.newPage();
  await page.goto(`${env.gateway.base}/pkg/index.js`);
  await page.evaluate(async ([ns, extra]) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    window.lock = (id) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } });
    window.settled = async (intentId, timeoutMs = 20_000) => {
      for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
        const r = (await window.client.intents()).find((i) => i.intentId === intentId);
        if (r && ["succeeded", "rejected", "conflict"].includes(r.state)) return r;
      }
      return (await window.client.intents()).find((i) => i.intentId === intentId) ?? null;
    };
    window.client = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: ns,
      timeoutMs: 10_000, ...(0, eval)(`(${extra})`) });
  }, [ns, extra]);
  return page;
}

const errorOf = (e) => ({ name: e.name, code: e.code, appended: e.appended, intentId: e.intentId, requestId: e.requestId, reason: e.reason });

test("an abort after the send ends the wait at once; the same client finishes the intent, once", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  await env.gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "delay", delayMs: 1500, times: 1 }] });
  const page = await openClient(context, unique("abort"));
  const r = await page.evaluate(async (id) => {
    // What happened in which order: the call's rejection, and each state the intent was written in.
    const order = [];
    window.client.subscribe((e) => order.push(e.state));
    const ac = new AbortController();
    let intentId;
    const call = window.client.sendAndWait(window.lock(id), { signal: ac.signal, onIntent: (i) => { intentId = i; } });
    while (!order.includes("sending")) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    const error = await call.catch((e) => e);
    order.push("rejected");
    const atRejection = (await window.client.intents()).find((x) => x.intentId === intentId);
    const record = await window.settled(error.intentId);
    const held = (await navigator.locks.query()).held.map((l) => l.name);
    return { error: { name: error.name, code: error.code, appended: error.appended, intentId: error.intentId, requestId: error.requestId },
      order, atRejection: { state: atRejection.state, ended: atRejection.attempts[0].endedAt ?? null },
      state: record?.state, attempts: record?.attempts.length, endedBy: record?.attempts[0].waitEndedBy, held };
  }, id);
  assert.equal(r.error.name, "CommandError");
  assert.equal(r.error.code, "Aborted");
  assert.equal(r.error.appended, null, "sent: the outcome is not known");
  assert.ok(r.error.intentId, "the error names the intent");
  // The answer is held 1.5 s by the gateway: the wait ended before it, while the attempt was still on the wire.
  assert.deepEqual(r.atRejection, { state: "sending", ended: null }, "the wait ended while the attempt was in flight");
  assert.ok(r.order.indexOf("rejected") < r.order.indexOf("succeeded"), `the caller was released before the answer: ${r.order}`);
  assert.equal(r.state, "succeeded", "the same client finished it without resume()");
  assert.equal(r.attempts, 1);
  assert.equal(r.endedBy, "cancelled", "the journal says the caller's wait ended by its abort");
  assert.deepEqual(r.held.filter((n) => n.includes(r.error.intentId)), [], "no lock left behind");
  await env.gateway.idle();
  assert.equal(await stored(id, r.error.requestId), 1);
  await context.close();
});

test("an abort before anything was sent says appended: false, and the intent is still sent, once", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  // headers() holds the first request until the test lets it go.
  const page = await openClient(context, unique("abort-early"),
    "{ headers: () => window.gate ?? (window.gate = new Promise((r) => { window.release = () => r({}); })) }");
  const r = await page.evaluate(async (id) => {
    const ac = new AbortController();
    const call = window.client.send(window.lock(id), { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 200));
    ac.abort();
    const error = await call.catch((e) => e);
    const before = (await window.client.intents()).find((i) => i.intentId === error.intentId);
    window.release();
    const record = await window.settled(error.intentId);
    return { code: error.code, appended: error.appended, intentId: error.intentId, requestId: error.requestId,
      before: before && before.attempts.map((a) => a.number), state: record?.state };
  }, id);
  assert.equal(r.code, "Aborted");
  assert.equal(r.appended, false, "no request had left");
  assert.ok(r.intentId, "the intent was written before the abort");
  assert.equal(r.state, "succeeded");
  await env.gateway.idle();
  assert.equal(await stored(id, r.requestId), 1);
  await context.close();
});

test("an abort, then the page closes mid-flight: resume() in a new page finishes the intent once", async () => {
  const context = await env.browser.newContext();
  const ns = unique("abort-close");
  const id = await createAccount();
  await env.gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "delay", delayMs: 2500, times: 1 }] });
  const page = await openClient(context, ns);
  const aborted = await page.evaluate(async (id) => {
    const ac = new AbortController();
    const call = window.client.sendAndWait(window.lock(id), { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 400));
    ac.abort();
    const e = await call.catch((e) => e);
    return { code: e.code, intentId: e.intentId, requestId: e.requestId };
  }, id);
  assert.equal(aborted.code, "Aborted");
  await page.close();
  const again = await openClient(context, ns);
  const r = await again.evaluate(async (intentId) => {
    const before = (await window.client.intents()).find((i) => i.intentId === intentId);
    const report = await window.client.resume();
    const after = (await window.client.intents()).find((i) => i.intentId === intentId);
    return { before: before?.state, driven: report.driven.map((o) => o.status), after: after?.state };
  }, aborted.intentId);
  assert.equal(r.before, "sending", "the closed page left it in flight");
  assert.deepEqual(r.driven, ["succeeded"]);
  assert.equal(r.after, "succeeded");
  await env.gateway.idle();
  assert.equal(await stored(id, aborted.requestId), 1, "confirmed, not sent again");
  await context.close();
});

test("a signal aborted already, or not a signal (a TypeError, as any mistake in a call's options): the call fails at once and nothing is written", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  const page = await openClient(context, unique("abort-now"));
  const r = await page.evaluate(async (id) => {
    const c = window.client;
    const codes = [];
    for (const call of [
      () => c.sendAndWait(window.lock(id), { signal: AbortSignal.abort() }),
      () => c.send(window.lock(id), { signal: { aborted: "no" } }),
      () => c.confirm("x", { signal: 42 }),
      () => c.resume("nope"),
      () => c.awaitDownstream("x", { signal: AbortSignal.abort() }),
    ]) codes.push(await call().then(() => "resolved", (e) => `${e.name}:${e.code}:${e.appended}`));
    const stream = c.sendAndWaitStream(window.lock(id), { signal: AbortSignal.abort() });
    codes.push(await stream.outcome.then((o) => o.error.errorCode));
    codes.push(await (async () => { try { for await (const _ of stream); return "ended"; } catch (e) { return e.code; } })());
    return { codes, intents: (await c.intents()).length };
  }, id);
  assert.deepEqual(r.codes, ["CommandError:Aborted:false", "TypeError:undefined:undefined", "TypeError:undefined:undefined",
    "TypeError:undefined:undefined", "CommandError:Aborted:false", "Aborted", "Aborted"]);
  assert.equal(r.intents, 0);
  await context.close();
});

test("a stream's abort ends its iteration with Aborted; the intent still succeeds", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  await env.gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "stage_gap", delayMs: 700, times: 1 }] });
  const page = await openClient(context, unique("abort-stream"));
  const r = await page.evaluate(async (id) => {
    const ac = new AbortController();
    const stream = window.client.sendAndWaitStream({ ...window.lock(id), waitStage: "SNAPSHOT" }, { signal: ac.signal });
    const seen = [];
    let code;
    try {
      for await (const element of stream) { seen.push(element.stage); if (seen.length === 1) ac.abort(); }
    } catch (e) { code = e.code; }
    const outcome = await stream.outcome;
    const record = await window.settled(outcome.intentId);
    return { seen, code, outcome: outcome.error.errorCode, state: record?.state };
  }, id);
  assert.deepEqual(r.seen, ["SENT"]);
  assert.equal(r.code, "Aborted");
  assert.equal(r.outcome, "Aborted");
  assert.equal(r.state, "succeeded");
  await context.close();
});

test("offline (wait): nothing is sent and no budget is spent; back online, the intent is sent once", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  const page = await openClient(context, unique("offline"), "{ retry: { maxAttempts: 2 } }");
  await context.setOffline(true);
  await page.evaluate((id) => { window.call = window.client.sendAndWait(window.lock(id)).then((v) => v, (e) => e); }, id);
  await sleep(1500);
  const waiting = await page.evaluate(async () => {
    const [r] = await window.client.intents();
    return { state: r.state, reason: r.reason, attempts: r.attempts.length, requestId: r.requestId };
  });
  assert.deepEqual({ ...waiting, requestId: undefined }, { state: "pending", reason: "offline", attempts: 0, requestId: undefined });
  await context.setOffline(false);
  const r = await page.evaluate(async () => {
    const v = await window.call;
    const [rec] = await window.client.intents();
    return { succeeded: v.succeeded, state: rec.state, attempts: rec.attempts.length };
  });
  assert.deepEqual(r, { succeeded: true, state: "succeeded", attempts: 1 });
  await env.gateway.idle();
  assert.equal(await stored(id, waiting.requestId), 1);
  await context.close();
});

test("offline: an abort ends the wait at once with appended false; two tabs back online send each intent once", async () => {
  const context = await env.browser.newContext();
  const ns = unique("offline-tabs");
  const id = await createAccount();
  const [a, b] = [await openClient(context, ns, '{ offline: "return" }'), await openClient(context, ns, '{ offline: "return" }')];
  const waiting = await openClient(context, ns);
  await context.setOffline(true);
  const aborted = await waiting.evaluate(async (id) => {
    const ac = new AbortController();
    const call = window.client.sendAndWait(window.lock(id), { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    const e = await call.catch((e) => e);
    return { code: e.code, appended: e.appended, intentId: e.intentId };
  }, id);
  assert.deepEqual({ ...aborted, intentId: !!aborted.intentId }, { code: "Aborted", appended: false, intentId: true });
  const left = await a.evaluate(async (id) => {
    const outcomes = await Promise.all([1, 2, 3].map(() => window.client.send(window.lock(id))));
    return outcomes.map((o) => [o.reason, o.intentId]);
  }, id);
  assert.deepEqual(left.map(([reason]) => reason), ["offline", "offline", "offline"]);
  await context.setOffline(false);
  const ids = [aborted.intentId, ...left.map(([, i]) => i)];
  const states = await b.evaluate(async (ids) => Promise.all(ids.map(async (i) => (await window.settled(i))?.state)), ids);
  assert.deepEqual(states, ["succeeded", "succeeded", "succeeded", "succeeded"]);
  await env.gateway.idle();
  const requestIds = await b.evaluate(async (ids) => (await window.client.intents()).filter((i) => ids.includes(i.intentId))
    .map((i) => [i.requestId, i.attempts.length]), ids);
  for (const [rid, attempts] of requestIds) {
    assert.equal(attempts, 1, "each sent once, by one tab");
    assert.equal(await stored(id, rid), 1);
  }
  await context.close();
});

test("offline (return): send settles at once with reason offline, sendAndWait rejects Offline; the online event sends them", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  const page = await openClient(context, unique("offline-return"), '{ offline: "return" }');
  await context.setOffline(true);
  const r = await page.evaluate(async (id) => {
    const outcome = await window.client.send(window.lock(id));
    const error = await window.client.sendAndWait(window.lock(id)).catch((e) => e);
    return { outcome: { status: outcome.status, reason: outcome.reason, appended: outcome.appended, code: outcome.error.errorCode },
      error: { code: error.code, appended: error.appended }, ids: [outcome.intentId, error.intentId] };
  }, id);
  assert.deepEqual(r.outcome, { status: "unknown", reason: "offline", appended: false, code: "Offline" });
  assert.deepEqual(r.error, { code: "Offline", appended: false });
  await context.setOffline(false);
  const states = await page.evaluate(async (ids) => Promise.all(ids.map(async (i) => (await window.settled(i))?.state)), r.ids);
  assert.deepEqual(states, ["succeeded", "succeeded"], "the online event resumed both");
  await env.gateway.idle();
  const requestIds = await page.evaluate(async () => (await window.client.intents()).map((i) => i.requestId));
  for (const rid of requestIds) assert.equal(await stored(id, rid), 1);
  await context.close();
});

test("an escalated intent is told once and confirmed again with backoff, never resent", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  // The answer is lost after the append, and the history cannot be asked.
  await env.gateway.faults("POST", { rules: [
    { match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 },
    { match: { path: "*/event/*" }, fault: "query_unavailable" }] });
  const page = await openClient(context, unique("escalated"),
    "{ retry: { maxConfirms: 1 }, onEscalated: (o) => (window.told ??= []).push(o.status) }");
  const first = await page.evaluate(async (id) => {
    const o = await window.client.send(window.lock(id));
    return { status: o.status, intentId: o.intentId, requestId: o.requestId, told: window.told };
  }, id);
  assert.equal(first.status, "escalated");
  assert.deepEqual(first.told, ["escalated"]);
  await env.gateway.faults("DELETE");
  const r = await page.evaluate(async (intentId) => {
    const rec = await window.settled(intentId, 15_000);
    return { state: rec?.state, attempts: rec?.attempts.length, told: window.told };
  }, first.intentId);
  assert.equal(r.state, "succeeded", "confirmed again by the client on its own");
  assert.equal(r.attempts, 1, "never resent");
  assert.deepEqual(r.told, ["escalated"]);
  assert.equal(await stored(id, first.requestId), 1);
  await context.close();
});

test("a SNAPSHOT wait that timed out after the append, then awaitDownstream", async () => {
  const context = await env.browser.newContext();
  const id = await createAccount();
  await env.gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "downstream_delay", delayMs: 2500, times: 1 }] });
  const page = await openClient(context, unique("downstream"));
  const r = await page.evaluate(async (id) => {
    const c = window.client;
    const first = await c.send({ ...window.lock(id), waitStage: "SNAPSHOT", timeoutMs: 800 });
    const short = await c.awaitDownstream(first.intentId, { timeoutMs: 200 });
    const lagging = (await (await fetch(`/account/${id}/snapshot`)).json()).version;
    const reached = await c.awaitDownstream(first.intentId, { timeoutMs: 15_000 });
    const caughtUp = (await (await fetch(`/account/${id}/snapshot`)).json()).version;
    const asked = [];
    const projected = await c.awaitDownstream(first.intentId, { stage: "PROJECTED",
      check: (q) => { asked.push(q); return asked.length >= 2; } });
    const unchecked = await c.awaitDownstream(first.intentId, { stage: "EVENT_HANDLED" }).catch((e) => `${e.name}: ${e.message}`);
    return { first: { status: first.status, pending: first.downstreamPending, attempts: first.attempts },
      short: { reached: short.downstreamReached, pending: short.downstreamPending },
      reached: { reached: reached.downstreamReached, pending: reached.downstreamPending, version: reached.appendedVersion, status: reached.status },
      lagging, caughtUp, projected: projected.downstreamReached, asked: asked.map((q) => [q.stage, q.aggregateId === id, typeof q.version]), unchecked };
  }, id);
  assert.deepEqual(r.first, { status: "succeeded", pending: "SNAPSHOT", attempts: 1 });
  assert.deepEqual(r.short, { reached: null, pending: "SNAPSHOT" });
  assert.equal(r.reached.reached, "SNAPSHOT");
  assert.equal(r.reached.pending, null);
  assert.equal(r.reached.status, "succeeded");
  assert.ok(r.reached.version >= 2, `the appended version (${r.reached.version})`);
  // The snapshot still lagged when the long wait began, and had caught up when it said so.
  assert.ok(r.lagging < r.reached.version, `the snapshot lagged (${r.lagging} < ${r.reached.version})`);
  assert.ok(r.caughtUp >= r.reached.version, `reached only once the snapshot held the append (${r.caughtUp})`);
  assert.equal(r.projected, "PROJECTED");
  assert.deepEqual(r.asked, [["PROJECTED", true, "number"], ["PROJECTED", true, "number"]]);
  assert.equal(r.unchecked, "TypeError: awaitDownstream: EVENT_HANDLED needs a `check` function (or the `checkDownstream` connect option)");
  await context.close();
});
