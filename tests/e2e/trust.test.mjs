// The trust boundaries in Chromium, Firefox and WebKit against the gateway,
// through the package as an app loads it: two tabs of different users on
// one device, a send during a sign-out, a record changed in IndexedDB, a redirect, forged messages
// between tabs, and the demo's Service Worker driving one user's intents.
// Each fails on what the gateway, or another host, received were the
// boundary not held (tests/edge/trust.test.mjs has the same in Node.js;
// docs/security.md names each threat and its test).
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount as createAccountOn } from "../support/gateway.mjs";
import { arrivals as arrivalsAt, gatewayBesideAnotherHost } from "../support/neighbour.mjs";
import { demoSendingTo, testEachEngine } from "../support/engines.mjs";

let gateway, other;
before(async () => { ({ gateway, other } = await gatewayBesideAnotherHost({ www: true, quiet: true })); });
after(async () => { await gateway?.stop(); await other?.close(); });

const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
const createAccount = () => createAccountOn(gateway.base, "trust");
const arrivals = (requestId) => arrivalsAt(gateway, requestId);
const faults = (...rules) => gateway.faults("POST", { rules });
const historyDown = { match: { path: "*/event/*" }, fault: "query_unavailable" };

/** Opens the package in `page` with `window.client` connected as `user` in namespace `ns` (IndexedDB). */
async function open(page, ns, user) {
  await page.goto(`${gateway.base}/pkg/index.js`);
  await page.evaluate(async ({ ns, user }) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    window.client = await WowClient.connect({ baseUrl: location.origin, user, namespace: ns, timeoutMs: 3_000,
      retry: { baseMs: 50, maxConfirms: 2 }, headers: () => ({ Authorization: `Bearer ${user}` }) });
    window.lock = (id, extra = {}) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 }, ...extra });
    // A create: its outcome is the intent's alone (a 503 of a proxy in front of the gateway leaves it unknown).
    window.create = (id) => ({ aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } });
    window.brief = (o) => ({ status: o.status, intentId: o.intentId, requestId: o.requestId, attempts: o.attempts,
      message: o.error?.errorMsg ?? null });
  }, { ns, user });
}

const cases = {
  async "two tabs of different users: Bob's tab never sends the intent Alice left, Alice's does"(browser) {
    const id = unique("acct"), ns = unique("device");
    const context = await browser.newContext();
    const [a, b] = [await context.newPage(), await context.newPage()];
    try {
      await faults({ match: { aggregateId: id }, fault: "unavailable", times: 1 }, historyDown);
      await open(a, ns, "alice");
      const left = await a.evaluate(async (id) => window.brief(await window.client.send(window.create(id))), id);
      assert.ok(["unknown", "escalated"].includes(left.status), JSON.stringify(left));
      // Alice signs out: her unresolved intent is parked. Bob signs in on the same browser.
      const parked = await a.evaluate(() => window.client.signOut());
      assert.equal(parked.parked, 1);
      await gateway.faults("DELETE");
      await open(b, ns, "bob");
      const bobs = await b.evaluate(async () => {
        dispatchEvent(new Event("online"));
        const report = await window.client.resume();
        await new Promise((r) => setTimeout(r, 500));
        return { driven: report.driven.length, listed: (await window.client.intents()).length };
      });
      await gateway.idle();
      const sent = await arrivals(left.requestId);
      assert.ok(sent.every((x) => x.authorization !== "Bearer bob"), `sent as Bob: ${JSON.stringify(sent)}`);
      assert.equal(sent.length, 1, "only Alice's own first attempt");
      assert.deepEqual(bobs, { driven: 0, listed: 0 });
      // Alice back in her tab: hers again, confirmed first, sent once with her credentials.
      await open(a, ns, "alice");
      const back = await a.evaluate(async () => (await window.client.resume()).driven.map(window.brief));
      assert.deepEqual(back.map((o) => [o.intentId, o.status]), [[left.intentId, "succeeded"]]);
      const after = await arrivals(left.requestId);
      assert.deepEqual(after.map((x) => x.authorization), ["Bearer alice", "Bearer alice"]);
      assert.equal(await gateway.stored("account", id, left.requestId), 1);
    } finally {
      await gateway.faults("DELETE");
      await context.close();
    }
  },

  async "a record changed in IndexedDB sends nothing anywhere: quarantined, with the reason"(browser) {
    const id = unique("acct"), ns = unique("tamper");
    const page = await browser.newPage();
    try {
      await faults({ match: { aggregateId: id }, fault: "unavailable", times: 1 }, historyDown);
      await open(page, ns, "dave");
      const left = await page.evaluate(async (id) => window.brief(await window.client.send(window.create(id))), id);
      await gateway.faults("DELETE");
      // What a script of the origin (or an extension) could do to the journal.
      await page.evaluate(async ({ ns, intentId }) => {
        window.client.free();
        const db = await new Promise((resolve, reject) => {
          const req = indexedDB.open(`wow-command-client/${ns}`);
          req.onsuccess = () => resolve(req.result);
          req.onerror = () => reject(req.error);
        });
        const store = db.transaction("intents", "readwrite").objectStore("intents");
        const record = await new Promise((r) => { store.get(intentId).onsuccess = (e) => r(e.target.result); });
        record.command.path = `7${record.command.path.slice(1)}`.replace(/^7/, "7/");
        await new Promise((r) => { store.put(record, intentId).onsuccess = r; });
        db.close();
      }, { ns, intentId: left.intentId });
      const before = other.received.length;
      await open(page, ns, "dave");
      const seen = await page.evaluate(async () => {
        const report = await window.client.resume();
        await new Promise((r) => setTimeout(r, 500));
        return { driven: report.driven.length, quarantined: await window.client.quarantined() };
      });
      await gateway.idle();
      assert.equal(other.received.length, before, `the other host received: ${JSON.stringify(other.received.slice(before))}`);
      assert.equal((await arrivals(left.requestId)).length, 1, "nothing more reached the gateway");
      assert.equal(seen.driven, 0);
      assert.match(seen.quarantined.map((q) => q.reason).join("\n"), /path `7\/account\/.*` must start with `\/`/);
    } finally {
      await gateway.faults("DELETE");
      await page.close();
    }
  },

  async "a send made or still beginning while its user signs out sends nothing, and a purge leaves nothing of it"(browser) {
    const [early, late, ns] = [unique("acct"), unique("acct"), unique("leaving")];
    const page = await browser.newPage();
    try {
      await open(page, ns, "judy");
      const seen = await page.evaluate(async ([early, late]) => {
        const code = (p) => p.then(() => "sent", (e) => e.code);
        // A keyed send begins (its key's record is read first); the purge starts before it is written.
        const begun = code(window.client.sendAndWait({ ...window.create(early), intentKey: `${early}/open` }));
        const purge = window.client.signOut({ purge: true });
        const refused = await code(window.client.send(window.create(late)));
        const report = await purge;
        return { begun: await begun, refused, busy: report.busy };
      }, [early, late]);
      assert.deepEqual(seen, { begun: "SigningOut", refused: "SigningOut", busy: [] });
      await gateway.idle();
      for (const id of [early, late]) {
        const r = await fetch(`${gateway.base}/__gateway/arrivals?contains=${id}`);
        assert.deepEqual((await r.json()).arrivals, [], `${id} reached the gateway during the sign-out`);
      }
      await open(page, ns, "judy");
      assert.deepEqual(await page.evaluate(() => window.client.intents()), [], "nothing of hers is left in IndexedDB");
    } finally {
      await page.close();
    }
  },

  async "a redirect is never followed: nothing reaches its host; the answer is lost, confirmed, and sent again"(browser) {
    const id = await createAccount(), ns = unique("redirect");
    const page = await browser.newPage();
    try {
      await faults({ match: { aggregateId: id }, fault: "redirect", location: `${other.base}/account/${id}/lock_amount`, times: 1 }, historyDown);
      await open(page, ns, "erin");
      const before = other.received.length;
      const lost = await page.evaluate(async (id) => window.brief(await window.client.send(window.lock(id))), id);
      assert.equal(other.received.length, before, `followed to its host: ${JSON.stringify(other.received.slice(before))}`);
      assert.ok(["unknown", "escalated"].includes(lost.status), JSON.stringify(lost));
      assert.match(lost.message, /a redirect \((307|opaque)\) was refused/);
      await gateway.faults("DELETE");
      const driven = await page.evaluate(async () => (await window.client.resume()).driven.map(window.brief));
      assert.deepEqual(driven.map((o) => [o.status, o.attempts]), [["succeeded", 2]]);
      assert.equal(await gateway.stored("account", id, lost.requestId), 1);
      assert.equal(other.received.length, before);
    } finally {
      await gateway.faults("DELETE");
      await page.close();
    }
  },

  async "forged messages between tabs are hints: a queued intent waits its turn, a far probe word is dropped"(browser) {
    const id = await createAccount(), ns = unique("forge");
    const context = await browser.newContext();
    const [page, forger] = [await context.newPage(), await context.newPage()];
    try {
      await open(page, ns, "frank");
      await forger.goto(`${gateway.base}/pkg/index.js`);
      await faults({ match: { aggregateId: id }, fault: "delay", delayMs: 1_500, times: 1 });
      await page.evaluate((id) => {
        window.ids = [];
        const scoped = (amount) => window.client.send(window.lock(id, { scope: `account:${id}`, body: { amount } }),
          { onIntent: (i) => window.ids.push(i) }).then(window.brief);
        window.both = Promise.all([scoped(1), scoped(2)]);
      }, id);
      const ids = await page.waitFor(() => (window.ids.length === 2 ? window.ids : null), null, 10_000);
      await new Promise((r) => setTimeout(r, 100));
      await forger.evaluate(({ ns, first }) => {
        new BroadcastChannel(`wow-command-client/${ns}`).postMessage({ intentId: first, state: "succeeded", revision: 99, version: 1, user: "frank" });
        const now = Date.now();
        new BroadcastChannel(`wow-command-client-history/${ns}`).postMessage({ history: true, source: `${location.origin} user frank`,
          from: 7, available: false, since: now, nextLookAt: now + 86_400_000, failures: 1 });
      }, { ns, first: ids[0] });
      await new Promise((r) => setTimeout(r, 400));
      assert.deepEqual(await arrivals(ids[1]), [], "the second was not sent while the first was on its way");
      const [a, b] = await page.evaluate(() => window.both);
      assert.deepEqual([a.status, b.status], ["succeeded", "succeeded"]);
      assert.deepEqual((await gateway.history("account", id)).slice(-2), [a.requestId, b.requestId], "in their turn");
      const history = await page.evaluate(() => window.client.history);
      assert.equal(history.available, true, JSON.stringify(history));
      assert.equal(history.droppedMessages, 1, JSON.stringify(history));
    } finally {
      await gateway.faults("DELETE");
      await context.close();
    }
  },

  async "the Service Worker drives its user's intent a closed tab left, and never another user's"(browser) {
    const id = await createAccount(), theirs = unique("acct"), ns = unique("sw");
    const context = await browser.newContext();
    try {
      // Carol's intent, left unresolved in the same journal (nothing of it appended).
      const carol = await context.newPage();
      await faults({ match: { aggregateId: theirs }, fault: "unavailable", times: 1 }, historyDown);
      await open(carol, ns, "carol");
      const left = await carol.evaluate(async (id) => window.brief(await window.client.send(window.create(id))), theirs);
      await carol.evaluate(() => window.client.free());
      await gateway.faults("DELETE");
      // Alice's demo tab, its worker registered for her, closed mid-flight.
      await faults({ match: { aggregateId: id }, fault: "delay", delayMs: 1_500, times: 1 });
      const { page: first, sent } = await demoSendingTo(context, `${gateway.base}/?ns=${ns}&user=alice&noresume`, id);
      const later = await context.newPage();
      await first.close();
      await later.goto(`${gateway.base}/?ns=${ns}&user=alice&noresume`);
      const byWorker = await later.waitFor(async (intentId) => {
        const report = await (await caches.match("/__worker-report"))?.json();
        return report?.reports.flatMap((r) => r.driven).find((o) => o.intentId === intentId) ? report.reports : null;
      }, sent.intentId, 30_000);
      assert.ok(byWorker, "the Service Worker drove Alice's intent");
      assert.ok(byWorker.every((r) => r.user === "alice"), JSON.stringify(byWorker));
      assert.ok(!byWorker.some((r) => r.driven.some((o) => o.intentId === left.intentId)), "never Carol's");
      await gateway.idle();
      assert.equal(await gateway.stored("account", id, sent.requestId), 1);
      assert.equal((await arrivals(left.requestId)).length, 1, "Carol's was sent by her tab alone");
      assert.equal(await gateway.stored("account", theirs, left.requestId), 0);
    } finally {
      await gateway.faults("DELETE");
      await context.close();
    }
  },
};

testEachEngine("the trust boundaries end to end", cases, 300_000);
