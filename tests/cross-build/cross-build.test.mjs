// Two builds over one journal: a tab on an older build of the package and a
// tab on this one, same origin, same namespace, in Chromium against the
// gateway. What a deploy meets while old tabs stay open: each build reads
// the other's records, hears its announcements, recognises its keyed
// intents (the payload fingerprint is the same text, floats included), and
// finishes what the other left unresolved, appended once.
//   scripts/build-at.sh <older rev> /tmp/old-pkg && OLD_PKG=/tmp/old-pkg node --test tests/cross-build/
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "../support/browser.mjs";
import { root, startGateway } from "../support/gateway.mjs";

const oldPkg = process.env.OLD_PKG;
const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;
let gateway, browser;

before(async () => {
  if (!oldPkg) return;
  const www = mkdtempSync(join(tmpdir(), "wow-cross-build-"));
  cpSync(oldPkg, join(www, "old"), { recursive: true });
  cpSync(join(root, "pkg"), join(www, "new"), { recursive: true });
  writeFileSync(join(www, "index.html"), "<!doctype html><title>cross-build</title>");
  gateway = await startGateway({ www, quiet: true });
  browser = await launchChromium();
});
after(async () => { await browser?.close(); await gateway?.stop(); });

/** A tab on `build` ("old" or "new") with `window.client` in namespace `ns`, recording events. */
async function tab(context, build, ns) {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error(`${build} page error:`, e.message));
  await page.goto(`${gateway.base}/`);
  await page.evaluate(async ([build, ns]) => {
    const { default: init, WowClient } = await import(`/${build}/index.js`);
    await init();
    window.client = await WowClient.connect({ baseUrl: location.origin, storage: "indexedDB", namespace: ns,
      timeoutMs: 3_000, retry: { baseMs: 50 } });
    window.events = [];
    window.client.subscribe((e) => window.events.push(e));
  }, [build, ns]);
  return page;
}

const send = (page, command) => page.evaluate((c) => window.client.send(c).then(
  (o) => ({ status: o.status, intentId: o.intentId, requestId: o.requestId, attempts: o.attempts }),
  (e) => ({ error: e.code })), command);

test("an old tab and a new tab over one journal", { skip: !oldPkg && "OLD_PKG is not set (scripts/build-at.sh)" }, async () => {
  const context = await browser.newContext();
  const ns = unique("cross");
  const [older, newer] = [await tab(context, "old", ns), await tab(context, "new", ns)];

  // A keyed intent with floats in its body, sent by the old build: the new build recognises it.
  const owner = unique("owner");
  const body = { productId: "p-1", quantity: 2, price: 0.1 + 0.2, weight: 1658206780088562.25, tiny: 1.5e-7 };
  const keyed = { aggregate: { resource: "cart", ownerId: owner, id: owner }, method: "POST",
    path: `/owner/${owner}/cart/add_cart_item`, body, intentKey: `${owner}/add` };
  const first = await send(older, keyed);
  assert.ok(["succeeded", "rejected"].includes(first.status), JSON.stringify(first));
  const again = await send(newer, keyed);
  assert.deepEqual(again, { ...first }, "the same intent, not a second one and not IntentKeyReused");
  const changed = await send(newer, { ...keyed, body: { ...body, quantity: 3 } });
  assert.equal(changed.error, "IntentKeyReused", "a different payload under the key is still refused");

  // A lost answer sent by the new build: the old tab hears it settle and reads its record.
  const id = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
  const lost = await send(newer, { aggregate: { resource: "account", id }, action: "create_account", create: true,
    body: { name: id, balance: 1 } });
  assert.equal(lost.status, "succeeded");
  await older.waitForFunction((i) => window.events.some((e) => e.intentId === i && e.state === "succeeded"), lost.intentId);
  const read = await older.evaluate(async (i) => (await window.client.intents()).find((r) => r.intentId === i), lost.intentId);
  assert.equal(read.state, "succeeded");
  assert.equal(read.requestId, lost.requestId);

  // The old tab closes mid-flight; the new one resumes its intent with the same requestId.
  const late = unique("acct");
  await gateway.faults("POST", { rules: [{ match: { aggregateId: late }, fault: "delay", delayMs: 1_500, times: 1 }] });
  older.evaluate((c) => window.client.send(c), { aggregate: { resource: "account", id: late }, action: "create_account",
    create: true, body: { name: late, balance: 1 } }).catch(() => {});
  await newer.waitForFunction((i) => window.events.some((e) => e.aggregate?.aggregateId === i && e.state === "sending"), late);
  await older.close();
  let record, reports = [];
  for (let i = 0; i < 20 && record?.state !== "succeeded"; i++) {
    // The closed tab's lock may take a moment to be released.
    reports.push(await newer.evaluate(() => window.client.resume()));
    record = await newer.evaluate(async (i) => (await window.client.intents()).find((r) => r.aggregate.aggregateId === i), late);
    if (record?.state !== "succeeded") await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(record.state, "succeeded", JSON.stringify(reports));
  assert.ok(reports.some((r) => r.driven.some((o) => o.intentId === record.intentId)), "the new build drove it");
  await gateway.idle();
  assert.equal(await gateway.stored("account", late, record.requestId), 1, "appended once");
  assert.equal(await gateway.stored("account", id, lost.requestId), 1);
  await context.close();
});
