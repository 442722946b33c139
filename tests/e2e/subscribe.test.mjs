// client.subscribe in Chromium, two tabs against the gateway: the tab that
// sends and the tab that only watches both see the intent go sending ->
// unknown -> succeeded when the gateway drops the answer after the append;
// one stream is in history; a filter narrows what a tab hears; a listener
// that throws changes nothing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";
import { createAccount as createAccountOn } from "../support/gateway.mjs";

const env = gatewayAndChromium({ quiet: true });

const createAccount = () => createAccountOn(env.gateway.base, "sub", 1_000);

/** A tab with `window.client` in namespace `ns`, recording every event in `window.events`. */
async function tab(context, ns, filter = null) {
  const page = await context.newPage();
  await page.goto(`${env.gateway.base}/pkg/index.js`);
  await page.evaluate(async ([ns, filter]) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    window.client = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: ns,
      timeoutMs: 3_000, retry: { baseMs: 50 } });
    window.events = [];
    window.stop = window.client.subscribe((e) => window.events.push(e), filter ?? undefined);
    window.client.subscribe(() => { throw new Error("a broken listener"); });
  }, [ns, filter]);
  return page;
}

test("two tabs: the sender and a watcher see sending -> unknown -> succeeded for a lost answer; one stream appended", async () => {
  const context = await env.browser.newContext();
  const ns = unique("tabs");
  const id = await createAccount();
  const [sender, watcher, settledOnly] = [await tab(context, ns), await tab(context, ns),
    await tab(context, ns, { states: ["succeeded"] })];
  await env.gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
  const outcome = await sender.evaluate(async (id) => {
    const o = await window.client.send({ aggregate: { resource: "account", id }, action: "lock_amount",
      body: { amount: 1 }, intentKey: `lock-${id}` });
    return { status: o.status, intentId: o.intentId, requestId: o.requestId };
  }, id);
  assert.equal(outcome.status, "succeeded");
  const seen = async (page) => {
    await page.waitForFunction((intentId) => window.events.some((e) => e.intentId === intentId && e.state === "succeeded"),
      outcome.intentId, { timeout: 10_000 });
    return page.evaluate((intentId) => window.events.filter((e) => e.intentId === intentId), outcome.intentId);
  };
  for (const [name, page] of [["sender", sender], ["watcher", watcher]]) {
    const events = await seen(page);
    assert.deepEqual(events.map((e) => e.state), ["sending", "unknown", "succeeded"], `${name}: ${JSON.stringify(events)}`);
    const last = events.at(-1);
    assert.equal(last.intentKey, `lock-${id}`);
    assert.equal(last.requestId, outcome.requestId);
    assert.equal(last.appended, true);
    assert.equal(last.attempts, 1, "confirmed by history, not resent");
    assert.deepEqual(last.aggregate, { resource: "account", aggregateId: id });
  }
  assert.deepEqual((await seen(settledOnly)).map((e) => e.state), ["succeeded"], "the filter narrows what a tab hears");
  await env.gateway.idle();
  assert.equal(await env.gateway.stored("account", id, outcome.requestId), 1);
  // Unsubscribed, the watcher hears nothing more.
  await watcher.evaluate(() => { window.stop(); window.events = []; });
  await sender.evaluate(async (id) => window.client.send({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } }), id);
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(await watcher.evaluate(() => window.events), []);
  await context.close();
});
