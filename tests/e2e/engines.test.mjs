// The promise, in Chromium, Firefox and WebKit against the gateway: send, a
// stage stream read with `for await`, a lost answer confirmed by history, an
// abort that ends only the wait, a reload mid-flight finished by the next
// page, two tabs sending one key, two tabs retrying one conflict, two tabs sending into one scope across a
// reload, a full localStorage, an idempotent consumer across two tabs, and
// lost answers while history is down (one probe, one look when it is back). Each engine's pages load the built package from
// /pkg/ on the gateway's origin, as an app would.
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount as createAccountOn, startGateway } from "../support/gateway.mjs";
import { demoSendingTo, testEachEngine } from "../support/engines.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

const createAccount = () => createAccountOn(gateway.base, "eng");

const rule = (id, fault, extra = {}) => gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault, times: 1, ...extra }] });

/** Opens the package in `page` with `window.client` over `storage` in namespace `ns`, after `setup()` ran there. */
async function open(page, ns, storage = "indexedDB", setup = () => {}) {
  await page.goto(`${gateway.base}/pkg/index.js`);
  await page.evaluate(setup);
  await page.evaluate(async ({ ns, storage }) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    window.client = await WowClient.connect({ user: null, baseUrl: location.origin, storage, namespace: ns,
      timeoutMs: 4_000, retry: { baseMs: 50 } });
    window.lock = (id, extra = {}) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 }, ...extra });
    window.errorOf = (e) => ({ name: e.name, code: e.code, outcome: e.outcome, appended: e.appended, intentId: e.intentId, requestId: e.requestId });
  }, { ns, storage });
}

/** The record of `intentId` once settled (or the last one seen after `timeoutMs`). */
const settled = (page, intentId, timeoutMs = 20_000) => page.waitFor(async (intentId) => {
  const r = (await window.client.intents()).find((i) => i.intentId === intentId);
  return r && ["succeeded", "rejected", "conflict"].includes(r.state) ? { state: r.state, attempts: r.attempts.length } : null;
}, intentId, timeoutMs);

const cases = {
  async "send and a stage stream read with for await"(browser) {
    const id = await createAccount();
    const page = await browser.newPage();
    await open(page, unique("stream"));
    const r = await page.evaluate(async (id) => {
      const sent = await window.client.sendAndWait(window.lock(id));
      const stages = [];
      const stream = window.client.sendAndWaitStream(window.lock(id, { waitStage: "SNAPSHOT" }));
      for await (const element of stream) stages.push([element.stage, element.succeeded]);
      const outcome = await stream.outcome;
      return { sent: [sent.stage, sent.requestId], stages, outcome: [outcome.status, outcome.requestId] };
    }, id);
    assert.equal(r.sent[0], "PROCESSED");
    assert.deepEqual(r.stages.map(([s]) => s), ["SENT", "PROCESSED", "SNAPSHOT"]);
    assert.ok(r.stages.every(([, ok]) => ok === true), JSON.stringify(r.stages));
    assert.equal(r.outcome[0], "succeeded");
    assert.equal(await gateway.stored("account", id, r.sent[1]), 1);
    assert.equal(await gateway.stored("account", id, r.outcome[1]), 1);
    await page.close();
  },

  async "a lost answer is confirmed by history, never resent"(browser) {
    const id = await createAccount();
    await rule(id, "drop_response_after_append");
    const page = await browser.newPage();
    await open(page, unique("lost"));
    const r = await page.evaluate(async (id) => {
      const o = await window.client.send(window.lock(id));
      return { status: o.status, requestId: o.requestId, attempts: o.attempts, appended: o.appended };
    }, id);
    assert.equal(r.status, "succeeded");
    assert.equal(r.appended, true);
    assert.equal(r.attempts, 1, "confirmed, not resent");
    await gateway.idle();
    assert.equal(await gateway.stored("account", id, r.requestId), 1);
    await page.close();
  },

  async "an abort ends the wait at once; the same client finishes the intent, once"(browser) {
    const id = await createAccount();
    await rule(id, "delay", { delayMs: 1_500 });
    const page = await browser.newPage();
    await open(page, unique("abort"));
    const e = await page.evaluate(async (id) => {
      const states = [];
      window.client.subscribe((e) => states.push(e.state));
      const ac = new AbortController();
      const call = window.client.sendAndWait(window.lock(id), { signal: ac.signal });
      while (!states.includes("sending")) await new Promise((r) => setTimeout(r, 10));
      ac.abort();
      const error = await call.catch((e) => e);
      const atRejection = (await window.client.intents()).find((x) => x.intentId === error.intentId);
      return { ...window.errorOf(error), atRejection: { state: atRejection.state, ended: atRejection.attempts[0].endedAt ?? null } };
    }, id);
    assert.equal(e.code, "Aborted");
    assert.equal(e.appended, null);
    // The gateway holds the answer 1.5 s: the wait ended before it, with the attempt still on the wire.
    assert.deepEqual(e.atRejection, { state: "sending", ended: null }, "the wait ended while the attempt was in flight");
    assert.deepEqual(await settled(page, e.intentId), { state: "succeeded", attempts: 1 });
    await gateway.idle();
    assert.equal(await gateway.stored("account", id, e.requestId), 1);
    await page.close();
  },

  async "a reload mid-flight: the next page's resume() finishes the intent, once"(browser) {
    const id = await createAccount();
    await rule(id, "delay", { delayMs: 1_500 });
    const ns = unique("reload");
    const context = await browser.newContext();
    const page = await context.newPage();
    await open(page, ns);
    const started = await page.evaluate(async (id) => {
      window.client.sendAndWait(window.lock(id)).catch(() => {});
      for (;;) {
        const [r] = await window.client.intents();
        if (r && r.attempts.length) return { intentId: r.intentId, requestId: r.requestId };
        await new Promise((r) => setTimeout(r, 20));
      }
    }, id);
    await open(page, ns); // the reload: a new document, the old one's wait gone
    const report = await page.evaluate(async () => {
      const r = await window.client.resume();
      return { driven: r.driven.map((o) => [o.intentId, o.status]), busy: r.busy };
    });
    const outcome = report.driven.find(([intentId]) => intentId === started.intentId)?.[1]
      ?? (await settled(page, started.intentId))?.state;
    assert.equal(outcome, "succeeded", JSON.stringify(report));
    await gateway.idle();
    assert.equal(await gateway.stored("account", id, started.requestId), 1);
    await context.close();
  },

  async "two tabs sending one key: one intent, one requestId, appended once"(browser) {
    const id = await createAccount();
    await rule(id, "delay", { delayMs: 300 });
    const ns = unique("tabs");
    const context = await browser.newContext();
    const [a, b] = [await context.newPage(), await context.newPage()];
    await open(a, ns);
    await open(b, ns);
    const start = (page) => page.evaluate((id) => {
      window.done = window.client.send(window.lock(id, { intentKey: `order-${id}` }))
        .then((o) => ({ status: o.status, requestId: o.requestId }), (e) => window.errorOf(e));
      window.done.then((r) => { window.result = r; });
    }, id);
    await Promise.all([start(a), start(b)]);
    const results = await Promise.all([a, b].map((p) => p.waitFor(() => window.result ?? null, null, 20_000)));
    assert.equal(results[0].requestId, results[1].requestId, JSON.stringify(results));
    const settledBoth = await Promise.all([a, b].map((p) => settled(p, results[0].requestId)));
    assert.deepEqual(settledBoth.map((r) => r?.state), ["succeeded", "succeeded"]);
    await gateway.idle();
    assert.equal(await gateway.stored("account", id, results[0].requestId), 1);
    await context.close();
  },

  async "a version conflict retried in two tabs at once: sent again once, with its requestId, and both hear it succeeded"(browser) {
    const id = await createAccount();
    const ns = unique("retry");
    const context = await browser.newContext();
    try {
      const [a, b] = [await context.newPage(), await context.newPage()];
      await open(a, ns);
      await open(b, ns);
      const conflict = await a.evaluate((id) => window.client.sendAndWait(window.lock(id, { expectedVersion: 7 }))
        .then(() => null, window.errorOf), id);
      assert.deepEqual([conflict?.code, conflict?.outcome, conflict?.appended], ["CommandExpectVersionConflict", "conflict", false]);
      // The first retry to take the intent's lock is held on the wire while the other waits for it.
      await rule(id, "delay", { delayMs: 300 });
      const start = (page) => page.evaluate((intentId) => {
        window.client.retry(intentId, { expectedVersion: 1 })
          .then((o) => ({ status: o.status, requestId: o.requestId }), window.errorOf)
          .then((r) => { window.result = r; });
      }, conflict.intentId);
      await Promise.all([start(a), start(b)]);
      const both = await Promise.all([a, b].map((p) => p.waitFor(() => window.result ?? null, null, 20_000)));
      const heard = { status: "succeeded", requestId: conflict.requestId };
      assert.deepEqual(both, [heard, heard]);
      await gateway.idle();
      assert.equal(await gateway.stored("account", id, conflict.requestId), 1);
    } finally {
      await context.close();
    }
  },

  async "a full localStorage: every command still goes out, the app's data untouched"(browser) {
    const id = await createAccount();
    const page = await browser.newPage();
    await open(page, unique("full"), "localStorage");
    const r = await page.evaluate(async (id) => {
      localStorage.setItem("app/reserve", "r".repeat(20_000));
      let chunk = 1 << 20, n = 0;
      while (chunk >= 1) { try { localStorage.setItem(`app/fill/${n}`, "f".repeat(chunk)); n += 1; } catch { chunk >>= 1; } }
      localStorage.removeItem("app/reserve");
      const app = () => Object.keys(localStorage).filter((k) => k.startsWith("app/")).length;
      const before = app();
      const results = [];
      for (let i = 0; i < 60; i += 1) {
        results.push(await window.client.sendAndWait(window.lock(id)).then((r) => r.requestId, (e) => `${e.code}: ${e.message}`));
      }
      return { results, before, after: app(), kept: (await window.client.intents()).length };
    }, id);
    const refused = r.results.filter((x) => x.includes(":"));
    assert.deepEqual(refused, [], "every command went out");
    assert.equal(r.after, r.before, "the app's data is untouched");
    assert.ok(r.kept < 60, `settled intents made room (${r.kept} kept)`);
    const counts = await Promise.all(r.results.map((requestId) => gateway.stored("account", id, requestId)));
    assert.deepEqual(counts.filter((c) => c !== 1), []);
    await page.close();
  },

  async "a tab closed mid-flight: the next page load wakes the Service Worker, which settles the intent without that page's resume()"(browser) {
    // Chromium wakes the worker with a Background Sync event; Firefox and
    // WebKit have none, so the page posts to it (requestBackgroundSync).
    const id = await createAccount();
    await rule(id, "delay", { delayMs: 1_500 });
    const ns = unique("sw");
    const context = await browser.newContext();
    const { page: first, sent } = await demoSendingTo(context, `${gateway.base}/?ns=${ns}&noresume`, id);
    const later = await context.newPage(); // opened first: a MiniBrowser ends with its last window
    await first.close();
    await later.goto(`${gateway.base}/?ns=${ns}&noresume`);
    const settled = await later.waitFor(async (intentId) => {
      if (document.body.dataset.ready !== "true") return null;
      const r = (await window.demo.client.intents()).find((i) => i.intentId === intentId);
      return r && r.state === "succeeded" ? { state: r.state, attempts: r.attempts.length } : null;
    }, sent.intentId, 30_000);
    // History first: asked while the first attempt was still held at the
    // gateway, it says "not appended", and the worker may send again with
    // the same requestId; the gateway appends it once either way.
    assert.equal(settled?.state, "succeeded", "the intent settled");
    const byWorker = await later.waitFor(async (intentId) => {
      const report = await (await caches.match("/__worker-report"))?.json();
      return report?.reports.flatMap((r) => r.driven).find((o) => o.intentId === intentId)?.status ?? null;
    }, sent.intentId, 10_000);
    assert.equal(byWorker, "succeeded", "the Service Worker drove it (its report names it)");
    await gateway.idle();
    assert.equal(await gateway.stored("account", id, sent.requestId), 1);
    await context.close();
  },

  async "a lost IndexedDB connection is opened again: the next command and the listing still work"(browser) {
    const id = await createAccount();
    const page = await browser.newPage();
    await open(page, unique("lost-db"), "indexedDB", () => {
      // Every connection the page opens, so the test can close them under the
      // live journal (what Safari does to an app back from the background).
      window.connections = [];
      const open = indexedDB.open.bind(indexedDB);
      indexedDB.open = (...args) => {
        const req = open(...args);
        req.addEventListener("success", () => window.connections.push(req.result));
        return req;
      };
    });
    const r = await page.evaluate(async (id) => {
      const first = await window.client.sendAndWait(window.lock(id));
      const closed = window.connections.length;
      for (const c of window.connections) c.close();
      const second = await window.client.sendAndWait(window.lock(id)).then((x) => x.requestId, (e) => `${e.code}: ${e.message}`);
      const listed = (await window.client.intents()).length;
      for (const c of window.connections) c.close();
      const third = await window.client.send(window.lock(id)).then((o) => o.status, (e) => `${e.code}: ${e.message}`);
      return { first: first.requestId, closed, second, listed, third };
    }, id);
    assert.ok(r.closed > 0, "the journal's connection was open");
    assert.doesNotMatch(r.second, /:/, `the next command went out: ${r.second}`);
    assert.equal(r.listed, 2);
    assert.equal(r.third, "succeeded");
    assert.equal(await gateway.stored("account", id, r.second), 1);
    await page.close();
  },

  async "an idempotent consumer in two tabs: one identity, one effect"(browser) {
    const ns = unique("consumer");
    const context = await browser.newContext();
    const [a, b] = [await context.newPage(), await context.newPage()];
    for (const page of [a, b]) {
      await page.goto(`${gateway.base}/pkg/index.js`);
      await page.evaluate(async (ns) => {
        const sdk = await import("/pkg/consumer-web.js");
        await sdk.default();
        window.effects = 0;
        window.consumer = await sdk.IdempotentConsumer.open({ namespace: ns });
      }, ns);
    }
    const deliver = (page) => page.evaluate(() => {
      window.consumer.handle("order-7:shipped", async (key) => {
        window.effects += 1;
        await new Promise((r) => setTimeout(r, 300));
        return { mail: `sent for ${key}` };
      }).then((o) => { window.result = { status: o.status, result: o.result, effects: window.effects }; },
        (e) => { window.result = { error: String(e) }; });
    });
    await Promise.all([deliver(a), deliver(b)]);
    const [ra, rb] = await Promise.all([a, b].map((p) => p.waitFor(() => window.result ?? null, null, 20_000)));
    assert.equal(ra.effects + rb.effects, 1, `the effect ran once across both tabs: ${JSON.stringify([ra, rb])}`);
    assert.deepEqual([ra.status, rb.status].sort(), ["ran", "skipped"]);
    assert.deepEqual(ra.result, rb.result);
    await context.close();
  },
  async "two tabs send into one scope, the first held on the wire and its tab reloaded: history holds them in the order written, each once"(browser) {
    const id = await createAccount();
    await rule(id, "delay", { delayMs: 1_500 });
    const ns = unique("scope");
    const context = await browser.newContext();
    const [a, b] = [await context.newPage(), await context.newPage()];
    await open(a, ns);
    await open(b, ns);
    const scope = `account:${id}`;
    const first = await a.evaluate(async ([id, scope]) => {
      window.client.send(window.lock(id, { scope })).catch(() => {});
      for (;;) {
        const r = (await window.client.intents()).find((x) => x.scope === scope && x.state === "sending");
        if (r) return r.requestId;
        await new Promise((r) => setTimeout(r, 20));
      }
    }, [id, scope]);
    // The other tab writes two more into the scope while the first is on the wire.
    const queued = await b.evaluate(async ([id, scope]) => {
      const calls = [window.client.send(window.lock(id, { scope })), window.client.send(window.lock(id, { scope }))];
      window.later = Promise.all(calls).then((os) => os.map((o) => o.status), (e) => [`${e.code}`]);
      for (;;) {
        const mine = (await window.client.intents()).filter((x) => x.scope === scope && x.state === "queued");
        if (mine.length === 2) return mine.sort((x, y) => x.scopeSeq - y.scopeSeq).map((x) => x.requestId);
        await new Promise((r) => setTimeout(r, 20));
      }
    }, [id, scope]);
    await open(a, ns); // the reload: the first intent's page is gone mid-flight
    await a.evaluate(() => window.client.resume());
    let history = [];
    for (const until = Date.now() + 30_000; history.length < 4 && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
      history = await gateway.history("account", id);
    }
    assert.deepEqual(history.slice(1), [first, ...queued], "the scope's order is the order of writes");
    await gateway.idle();
    for (const requestId of [first, ...queued]) assert.equal(await gateway.stored("account", id, requestId), 1);
    await context.close();
  },
  async "history down: lost answers escalate on a few shared looks, and one look confirms them all when it is back"(browser) {
    const prefix = unique("probe");
    await gateway.faults("POST", { rules: [
      { match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable" },
      { match: { method: "POST", path: "/account/create_account" }, fault: "drop_response_after_append" },
    ] });
    const queries = async (since = 0) => {
      const r = await (await fetch(`${gateway.base}/__gateway/arrivals?contains=${prefix}&since=${since}`)).json();
      return { n: r.arrivals.filter((a) => /\/event\/(count|list)$/.test(a.path)).length, next: r.next };
    };
    const page = await browser.newPage();
    try {
      await open(page, unique("probe"));
      // Started in the page and watched from here: WebKit's driver runs one script at a time.
      await page.evaluate((prefix) => {
        window.statuses = null;
        Promise.all(Array.from({ length: 20 }, (_, i) => window.client.send({ aggregate: { resource: "account", id: `${prefix}-${i}` },
          action: "create_account", create: true, body: { name: `${prefix}-${i}`, balance: 1 } })))
          .then((os) => { window.statuses = os.map((o) => o.status); });
      }, prefix);
      const statuses = await page.waitFor(() => window.statuses, null, 60_000);
      assert.deepEqual([...new Set(statuses)], ["escalated"], `${statuses}`);
      const escalating = await queries();
      assert.ok(escalating.n <= 8, `20 escalated on ${escalating.n} queries (3 each without the probe: 60)`);
      assert.equal((await page.evaluate(() => window.client.history)).available, false);
      await gateway.faults("DELETE");
      const done = await page.waitFor(async () => {
        const all = await window.client.intents();
        return all.length === 20 && all.every((r) => r.state === "succeeded") ? all.map((r) => [r.aggregate.aggregateId, r.requestId]) : null;
      }, null, 45_000);
      assert.ok(done, "all confirmed by the probe once history is back");
      const back = await queries(escalating.next);
      assert.ok(back.n <= 3, `history back: ${back.n} queries for 20`);
      for (const [id, requestId] of done) assert.equal(await gateway.stored("account", id, requestId), 1);
    } finally {
      await gateway.faults("DELETE");
      await page.close();
    }
  },
};

testEachEngine("the promise end to end", cases, 420_000);
