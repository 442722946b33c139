// Idempotent consumers in Chromium: IndexedDB effect records and Web Locks
// across two tabs, a tab closed between its effect and the record, and a
// localStorage that refuses writes. The page loads the built package the
// way an app would (from /pkg/ on the gateway's origin).
import { test } from "node:test";
import assert from "node:assert/strict";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";

const env = gatewayAndChromium();

/** A tab with the package loaded as `window.sdk`, and effects counted in `window.effects`. */
async function tab(context) {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${env.gateway.base}/?noresume&noworker`);
  await page.evaluate(async () => {
    const sdk = await import("/pkg/consumer-web.js");
    await sdk.default();
    window.sdk = sdk;
    window.effects = 0;
  });
  return page;
}

test("two tabs delivering one identity at once: one runs it, the other waits on the lock and skips", async () => {
  const context = await env.browser.newContext();
  const [a, b] = [await tab(context), await tab(context)];
  const ns = unique("tabs");
  const deliver = (page) => page.evaluate(async (ns) => {
    const consumer = await sdk.IdempotentConsumer.open({ namespace: ns });
    const outcome = await consumer.handle("order-7:shipped", async (key) => {
      window.effects += 1;
      await new Promise((r) => setTimeout(r, 300));
      return { mail: `sent for ${key}` };
    });
    return { status: outcome.status, result: outcome.result, effects: window.effects };
  }, ns);
  const [ra, rb] = await Promise.all([deliver(a), deliver(b)]);
  assert.equal(ra.effects + rb.effects, 1, "the effect ran once across both tabs");
  assert.deepEqual([ra.status, rb.status].sort(), ["ran", "skipped"]);
  assert.deepEqual(ra.result, rb.result);
  await context.close();
});

test("a tab closed between the effect and its record: the next delivery reconciles at once (the lock is gone)", async () => {
  const context = await env.browser.newContext();
  const ns = unique("closed");
  const first = await tab(context);
  // The effect starts and never returns; the tab is closed meanwhile.
  await first.evaluate((ns) => {
    window.started = sdk.IdempotentConsumer.open({ namespace: ns, leaseMs: 60_000 }).then((c) =>
      c.handle("evt-1", () => { window.effects += 1; return new Promise(() => {}); }));
  }, ns);
  await first.waitForFunction(() => window.effects === 1);
  await first.close();
  const second = await tab(context);
  const outcome = await second.evaluate(async (ns) => {
    const consumer = await sdk.IdempotentConsumer.open({ namespace: ns, leaseMs: 60_000 });
    const seen = [];
    let leaseLeft;
    const outcome = await consumer.handle("evt-1", () => { window.effects += 1; }, {
      reconcile: (identity, record) => { seen.push(record.state); leaseLeft = record.leaseUntil - Date.now(); return { done: "found upstream" }; },
    });
    return { status: outcome.status, result: outcome.result, seen, effects: window.effects, leaseLeft };
  }, ns);
  assert.equal(outcome.status, "reconciled");
  assert.deepEqual(outcome.seen, ["started"]);
  assert.equal(outcome.effects, 0, "not run blindly again");
  assert.equal(outcome.result, "found upstream");
  assert.ok(outcome.leaseLeft > 0, `reconciled while the 60 s lease still ran (${outcome.leaseLeft} ms of it left)`);
  await context.close();
});

test("a localStorage that refuses writes: the effect never runs", async () => {
  const context = await env.browser.newContext();
  const page = await tab(context);
  const result = await page.evaluate(async () => {
    const consumer = await sdk.IdempotentConsumer.open({ storage: "localStorage", namespace: "full" });
    Storage.prototype.setItem = () => { throw new DOMException("full", "QuotaExceededError"); };
    const error = await consumer.handle("evt", () => { window.effects += 1; }).catch((e) => e);
    return { code: error.code, isEffectError: error instanceof sdk.EffectError, effects: window.effects };
  });
  assert.deepEqual(result, { code: "StorageUnavailable", isEffectError: true, effects: 0 });
  await context.close();
});
