// The Service Worker entry in real Chromium, through the demo: a tab closed
// mid-flight leaves its intent in the journal; the worker, woken by a
// Background Sync event (dispatched through the DevTools protocol), finishes
// it; a new page sees it succeeded, and the history holds one stream.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { closeTabMidFlight, gatewayAndChromium, unique } from "../support/e2e.mjs";
import { root } from "../support/gateway.mjs";

const artifacts = join(root, "test-artifacts");
mkdirSync(artifacts, { recursive: true });

const env = gatewayAndChromium({ quiet: true });

async function demo(context, ns) {
  const page = await context.newPage();
  await page.goto(`${env.gateway.base}/?ns=${ns}&noresume`);
  await page.waitForSelector("body[data-ready=true]");
  return page;
}

test("a tab closed mid-flight: the Service Worker finishes the intent on a sync event, once", async () => {
  const context = await env.browser.newContext();
  const ns = unique("worker");
  const id = unique("acct");
  const r = await fetch(`${env.gateway.base}/account/create_account`, { method: "POST",
    headers: { "Content-Type": "application/json", "Command-Aggregate-Id": id }, body: JSON.stringify({ name: id, balance: 100 }) });
  assert.equal(r.status, 200);
  const page = await demo(context, ns);
  assert.ok(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => !!r.active)), "the demo registered its worker");
  const sent = await closeTabMidFlight(env.gateway, page, id, "window.demo.client");

  // No page drives the journal now (this one only listens to the
  // announcements): wake the worker as the browser would.
  const listener = await context.newPage();
  await listener.goto(`${env.gateway.base}/pkg/index.js`);
  await listener.evaluate((ns) => {
    window.heard = [];
    new BroadcastChannel(`wow-command-client/${ns}`).onmessage = ({ data }) => window.heard.push(data);
  }, ns);
  const cdp = await context.newCDPSession(listener);
  const registration = new Promise((resolve) => cdp.on("ServiceWorker.workerRegistrationUpdated", ({ registrations }) => {
    const ours = registrations.find((x) => x.scopeURL.startsWith(env.gateway.base) && !x.isDeleted);
    if (ours) resolve(ours);
  }));
  await cdp.send("ServiceWorker.enable");
  const { registrationId } = await registration;
  await cdp.send("ServiceWorker.dispatchSyncEvent", { origin: env.gateway.base, registrationId, tag: "wow-command-client", lastChance: false });

  const later = await demo(context, ns);
  const seen = await later.evaluate(async (intentId) => {
    for (let i = 0; i < 200; i++) {
      const report = await (await caches.match("/__worker-report"))?.json();
      const driven = report?.reports.flatMap((x) => x.driven) ?? [];
      const mine = driven.find((o) => o.intentId === intentId);
      if (mine) {
        const rec = (await window.demo.client.intents()).find((x) => x.intentId === intentId);
        return { worker: mine.status, state: rec.state, attempts: rec.attempts.length };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return null;
  }, sent.intentId);
  assert.deepEqual(seen, { worker: "succeeded", state: "succeeded", attempts: 1 }, "the worker finished it");
  const heard = await listener.evaluate((intentId) => window.heard.filter((a) => a.intentId === intentId).map((a) => a.state), sent.intentId);
  assert.equal(heard.at(-1), "succeeded", `pages hear the worker's outcome: ${heard}`);
  await later.reload();
  await later.waitForSelector("body[data-ready=true]");
  assert.match(await later.textContent("[data-testid=worker]"), /finished 1 intent while no page drove them: .*succeeded/);
  await later.screenshot({ path: join(artifacts, "worker.png"), fullPage: true });
  assert.equal(await env.gateway.stored("account", id, sent.requestId), 1, "confirmed from history, not sent again");
  await context.close();
});
