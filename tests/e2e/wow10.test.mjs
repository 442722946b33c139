// Against a gateway that reads only Wow's `filter` query shape (`--wow 10`:
// the deprecated `condition` removed, as Wow 9 plans for 10.0), in
// Chromium, Firefox and WebKit: the page learns the Wow version from what the
// server states (its OpenAPI document's `x-wow-version`) and passes it to
// `connect({ wow })`; a lost answer is then confirmed and finished, and a
// command lost before the gateway is sent again with the same requestId.
// Without `wow`, the refused questions leave the intent unknown, never "not
// appended" (tests/edge/wow9.test.mjs has the same in Node.js).
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount as createAccountOn, startGateway } from "../support/gateway.mjs";
import { testEachEngine } from "../support/engines.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true, wow: "10" }); });
after(async () => { await gateway?.stop(); });

const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
const createAccount = () => createAccountOn(gateway.base, "wow10");
const rule = (id, fault, times = 1) => ({ match: { aggregateId: id }, fault, times });

/** Opens the package in `page` with `window.client`, told the version the server states (or none). */
async function open(page, stated) {
  await page.goto(`${gateway.base}/pkg/index.js`);
  return page.evaluate(async ({ ns, stated }) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    const doc = await (await fetch("/v3/api-docs")).json();
    const wow = stated ? doc.info["x-wow-version"] : undefined;
    window.client = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: ns, wow,
      timeoutMs: 4_000, retry: { baseMs: 50, maxConfirms: 2 } });
    window.create = (id) => ({ aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 1 } });
    window.outcome = (o) => ({ status: o.status, appended: o.appended ?? null, attempts: o.attempts, requestId: o.requestId, reason: o.reason ?? null });
    return wow ?? null;
  }, { ns: unique("wow10"), stated });
}

const cases = {
  async "the version the server states: a lost answer confirmed, a lost command sent again with its requestId"(browser) {
    const [lost, dropped] = [unique("acct"), unique("acct")];
    // Dropped twice: a browser may send a POST again by itself when its reused connection is reset
    // before any answer (Chromium and Firefox do), so one drop may not reach the page.
    await gateway.faults("POST", { rules: [rule(lost, "drop_response_after_append"), rule(dropped, "drop_request", 2)] });
    const page = await browser.newPage();
    assert.equal(await open(page, true), "10.0.0");
    const [a, b] = await page.evaluate(async ([lost, dropped]) => [
      window.outcome(await window.client.send(window.create(lost))),
      window.outcome(await window.client.send(window.create(dropped))),
    ], [lost, dropped]);
    assert.deepEqual([a.status, a.appended, a.attempts], ["succeeded", true, 1], JSON.stringify(a));
    assert.equal(b.status, "succeeded", JSON.stringify(b));
    assert.ok(b.attempts >= 2, `confirmed not appended, then sent again: ${JSON.stringify(b)}`);
    const sent = await (await fetch(`${gateway.base}/__gateway/arrivals?requestId=${b.requestId}`)).json();
    assert.ok(sent.arrivals.length >= 3, `every send carried the one requestId: ${JSON.stringify(sent.arrivals)}`);
    await gateway.idle();
    assert.equal(await gateway.stored("account", lost, a.requestId), 1);
    assert.equal(await gateway.stored("account", dropped, b.requestId), 1, "appended once, under the requestId it was first sent with");
    await page.close();
  },

  async "no version stated: the refused question leaves a lost answer unknown, saying what the server said"(browser) {
    const id = unique("acct");
    await gateway.faults("POST", { rules: [rule(id, "drop_response_after_append")] });
    const page = await browser.newPage();
    await open(page, false);
    const o = await page.evaluate(async (id) => window.outcome(await window.client.send(window.create(id))), id);
    assert.deepEqual([o.status, o.appended, o.attempts], ["escalated", null, 1], JSON.stringify(o));
    assert.match(o.reason, /answered 400 QuerySchemaValidation/, o.reason);
    assert.equal(await gateway.stored("account", id, o.requestId), 1, "appended: and not sent again");
    await page.close();
  },
};

testEachEngine("a gateway that reads only the filter query shape", cases, 180_000);
