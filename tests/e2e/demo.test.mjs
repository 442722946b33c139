// End-to-end: the demo page in Debian's Chromium (playwright-core) against
// the test gateway, which serves the page and the built package. Each test
// works in its own storage namespace; the gateway's history is checked
// independently of the page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";
import { root } from "../support/gateway.mjs";

const artifacts = join(root, "test-artifacts");
mkdirSync(artifacts, { recursive: true });
const env = gatewayAndChromium();

async function open(context, ns, extra = "") {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  // The demo's Service Worker is left out here: its drives are tests/e2e/worker.test.mjs's.
  await page.goto(`${env.gateway.base}/?ns=${ns}&noworker${extra}`);
  await page.waitForSelector("body[data-ready=true]", { timeout: 20_000 });
  return page;
}

const fault = (rule) => env.gateway.faults("POST", { rules: [rule] });
const stored = (aggregateId, requestId) => env.gateway.stored("account", aggregateId, requestId);

async function openAccount(page) {
  await page.click("[data-testid=open]");
  const card = page.locator(".card").first();
  await card.locator("xpath=self::*[@data-status]").waitFor({ timeout: 20_000 });
  assert.equal(await card.getAttribute("data-status"), "succeeded");
  // The demo refreshes its account list after the card is done: the id is
  // the card's, and the forms offer it once that refresh ran (reading the
  // list at once raced the refresh and could return no account at all).
  const id = (await card.locator("h3").textContent()).replace(/^Open account /, "");
  await page.waitForFunction((id) => document.querySelector("[data-testid=account]").value === id, id, { timeout: 10_000 });
  return id;
}

async function lastCard(page, status) {
  const card = page.locator(".card").first();
  await page.waitForFunction((s) => document.querySelector(".card")?.dataset.status === s, status, { timeout: 30_000 });
  return card;
}

test("a normal send fills the stage timeline as elements arrive", async () => {
  const context = await env.browser.newContext();
  const page = await open(context, unique("normal"));
  const account = await openAccount(page);
  await page.click("[data-testid=lock]");
  const card = await lastCard(page, "succeeded");
  const stages = await card.locator("[data-testid=timeline] li").allTextContents();
  assert.deepEqual(stages, ["SENT", "PROCESSED", "SNAPSHOT"]);
  const requestId = await card.getAttribute("data-request-id");
  assert.equal(await stored(account, requestId), 1);
  await page.screenshot({ path: join(artifacts, "normal.png"), fullPage: true });
  // Phone width: nothing overflows sideways.
  await page.setViewportSize({ width: 375, height: 800 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than a phone`);
  await page.screenshot({ path: join(artifacts, "phone.png"), fullPage: true });
  await context.close();
});

test("a response dropped after the append ends succeeded after confirmation, without a resend", async () => {
  const context = await env.browser.newContext();
  const page = await open(context, unique("drop"));
  const account = await openAccount(page);
  await page.check("[data-testid=mode-json]");
  await page.selectOption("[data-testid=fault]", "drop_response_after_append");
  await page.click("[data-testid=arm]");
  await page.click("[data-testid=lock]");
  const card = await lastCard(page, "succeeded");
  assert.match(await card.locator("[data-testid=ids]").textContent(), /attempts 1/);
  assert.match(await card.locator("[data-testid=states]").textContent(), /unknown → succeeded/);
  const requestId = await card.getAttribute("data-request-id");
  assert.equal(await stored(account, requestId), 1, "the gateway holds one stream");
  await page.waitForSelector(`[data-testid=history] tr[data-request-id="${requestId}"]`);
  assert.equal(await page.locator(`[data-testid=history] tr[data-request-id="${requestId}"]`).count(), 1);
  await page.screenshot({ path: join(artifacts, "dropped-response.png"), fullPage: true });
  await context.close();
});

test("a reload mid-flight resumes the same requestId", async () => {
  const context = await env.browser.newContext();
  const ns = unique("reload");
  const page = await open(context, ns);
  const account = await openAccount(page);
  await fault({ match: { aggregateId: account }, fault: "delay", delayMs: 2500, times: 1 });
  await page.click("[data-testid=lock]");
  // The intent is persisted as sending before it goes out.
  await page.waitForSelector("[data-testid=journal] tr[data-state=sending]", { timeout: 10_000 });
  const requestId = await page.getAttribute("[data-testid=journal] tr[data-state=sending]", "data-request-id");
  await page.click("[data-testid=reload]");
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  const card = page.locator(".card", { hasText: "Resumed after a reload" });
  await card.waitFor();
  assert.equal(await card.getAttribute("data-status"), "succeeded");
  assert.equal(await card.getAttribute("data-request-id"), requestId);
  await env.gateway.idle(); // the delayed first delivery lands (and is refused)
  assert.equal(await stored(account, requestId), 1);
  await page.screenshot({ path: join(artifacts, "reloaded.png"), fullPage: true });
  await context.close();
});

test("with history unavailable the intent ends escalated, visibly, and a manual confirm settles it", async () => {
  const context = await env.browser.newContext();
  const page = await open(context, unique("escalate"));
  const account = await openAccount(page);
  await page.check("[data-testid=mode-json]");
  await fault({ match: { aggregateId: account }, fault: "drop_response_after_append", times: 1 });
  // Until the test lifts it: the client asks again on its own, with backoff.
  await fault({ match: { path: "/account/event/*" }, fault: "query_unavailable" });
  await page.click("[data-testid=lock]");
  const card = await lastCard(page, "escalated");
  assert.match(await card.locator("[data-testid=outcome]").textContent(), /could not confirm/);
  await page.check("[data-testid=only-open]");
  const row = page.locator("[data-testid=journal] tr[data-state=escalated]");
  await row.waitFor();
  await page.screenshot({ path: join(artifacts, "escalated.png"), fullPage: true });
  const requestId = await card.getAttribute("data-request-id");
  await env.gateway.faults("DELETE");
  // A manual confirm settles it at once. The client also asks again on its
  // own, with backoff, so on a slow machine the row may have settled first.
  const confirm = page.locator(`[data-testid=journal] tr[data-request-id="${requestId}"][data-state=escalated] [data-testid=confirm]`);
  if (await confirm.click({ timeout: 3_000 }).then(() => true, () => false)) {
    await page.waitForFunction(() => /succeeded, appended/.test(document.getElementById("status").textContent), null, { timeout: 20_000 });
  }
  await page.uncheck("[data-testid=only-open]");
  await page.waitForSelector(`[data-testid=journal] tr[data-request-id="${requestId}"][data-state=succeeded]`);
  assert.equal(await stored(account, requestId), 1);
  await context.close();
});

test("history down for a while: the page shows the probe, and the intent waiting on it succeeds once history is back", async () => {
  const context = await env.browser.newContext();
  const page = await open(context, unique("probe"), "&historyDownMs=6000");
  const account = await openAccount(page);
  await page.check("[data-testid=mode-json]");
  await page.click("[data-testid=history-down]");
  await page.click("[data-testid=lock]");
  await page.waitForSelector("[data-testid=probe][data-available=false]", { timeout: 20_000 });
  assert.match(await page.locator("[data-testid=probe]").textContent(), /History unavailable since .+; the probe looks again at .+ failed look/);
  await page.screenshot({ path: join(artifacts, "history-down.png"), fullPage: true });
  const card = await lastCard(page, "escalated");
  const requestId = await card.getAttribute("data-request-id");
  // Nobody confirms it by hand: the probe's look after the 6 s finds it appended.
  await page.waitForSelector("[data-testid=probe][data-available=true]", { timeout: 45_000 });
  await page.waitForSelector(`[data-testid=journal] tr[data-request-id="${requestId}"][data-state=succeeded]`, { timeout: 20_000 });
  assert.equal(await stored(account, requestId), 1);
  await context.close();
});

test("a stream cut after SENT becomes unknown, then confirmed", async () => {
  const context = await env.browser.newContext();
  const page = await open(context, unique("cut"));
  const account = await openAccount(page);
  await page.selectOption("[data-testid=fault]", "cut_stream_after:SENT");
  await page.click("[data-testid=arm]");
  await page.click("[data-testid=lock]");
  const card = await lastCard(page, "succeeded");
  assert.deepEqual(await card.locator("[data-testid=timeline] li").allTextContents(), ["SENT"]);
  await page.waitForFunction(() => /unknown → succeeded/.test(document.querySelector(".card [data-testid=states]").textContent));
  const requestId = await card.getAttribute("data-request-id");
  assert.equal(await stored(account, requestId), 1);
  await page.screenshot({ path: join(artifacts, "cut-stream.png"), fullPage: true });
  await context.close();
});

test("two pages resuming the same unknown intents drive each exactly once", async () => {
  const context = await env.browser.newContext();
  const ns = unique("tabs");
  const first = await open(context, ns, "&noresume");
  const account = await openAccount(first);
  await fault({ match: { aggregateId: account }, fault: "delay", delayMs: 1500, times: 4 });
  await first.check("[data-testid=mode-json]");
  for (let i = 0; i < 4; i++) await first.click("[data-testid=lock]");
  await first.waitForFunction(() => document.querySelectorAll("[data-testid=journal] tr[data-state=sending]").length === 4, null, { timeout: 10_000 });
  await first.close(); // the tab dies mid-flight
  const [b, c] = [await open(context, ns, "&noresume"), await open(context, ns, "&noresume")];
  const [rb, rc] = await Promise.all([b.evaluate(() => window.demo.resume()), c.evaluate(() => window.demo.resume())]);
  const driven = (r) => r.driven.map((o) => o.requestId);
  const both = [...driven(rb), ...driven(rc)];
  assert.equal(new Set(both).size, both.length, "no intent was driven twice");
  assert.equal(both.length, 4, `all four were driven: ${JSON.stringify([rb, rc])}`);
  for (const o of [...rb.driven, ...rc.driven]) assert.equal(o.status, "succeeded");
  await env.gateway.idle(); // the dead tab's delayed deliveries land (and are refused)
  for (const requestId of both) assert.equal(await stored(account, requestId), 1);
  await context.close();
});

test("two locks in one scope with the first answer dropped: the second waits, queued, and history holds them in order", async () => {
  const context = await env.browser.newContext();
  const page = await open(context, unique("scope"));
  const account = await openAccount(page);
  await page.check("[data-testid=mode-json]");
  await page.click("[data-testid=scoped]");
  await page.waitForFunction(() => [...document.querySelectorAll(".card")].slice(0, 2).every((c) => c.dataset.status === "succeeded"),
    null, { timeout: 30_000 });
  // Newest first: the second lock's card is on top.
  const [second, first] = [page.locator(".card").nth(0), page.locator(".card").nth(1)];
  assert.match(await first.locator("h3").textContent(), /^Lock 1 /);
  // The card learns its states from the journal's events, which may land after the call settled.
  await page.waitForFunction(() => /succeeded/.test(document.querySelectorAll(".card [data-testid=states]")[1]?.textContent ?? ""),
    null, { timeout: 10_000 }).catch(() => {});
  assert.match(await first.locator("[data-testid=states]").textContent(), /unknown → succeeded/, "the first's lost answer was confirmed");
  await page.waitForFunction(() => /queued → sending/.test(document.querySelector(".card [data-testid=states]")?.textContent ?? ""),
    null, { timeout: 10_000 });
  const ids = await Promise.all([first, second].map((c) => c.getAttribute("data-request-id")));
  const history = await env.gateway.history("account", account);
  assert.deepEqual(history.slice(1), ids, "in the order written, each once");
  await page.screenshot({ path: join(artifacts, "scope.png"), fullPage: true });
  await context.close();
});

test("withdraw what is queued: the second lock of a scope is never sent", async () => {
  const context = await env.browser.newContext();
  const page = await open(context, unique("withdraw"));
  const account = await openAccount(page);
  await page.check("[data-testid=mode-json]");
  await page.click("[data-testid=scoped-slow]");
  // The first is held at the gateway for 3 s; the second waits behind it.
  const queued = await page.evaluate(async () => {
    for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      const records = await window.demo.client.intents();
      const first = records.find((r) => r.scopeSeq === 1), second = records.find((r) => r.scopeSeq === 2);
      if (first?.state === "sending" && second?.state === "queued") return second.requestId;
    }
    return null;
  });
  assert.ok(queued, "the second lock was queued behind the first");
  await page.click("[data-testid=withdraw-scope]");
  await page.waitForFunction(() => /withdrawn/.test(document.getElementById("armed").textContent), null, { timeout: 10_000 });
  assert.match(await page.locator("#armed").textContent(), /^1 queued command/);
  // Its card: a caller whose wait ended first was told nothing was sent; the journal says withdrawn.
  const record = await page.evaluate((id) => window.demo.client.intent(id), queued);
  assert.deepEqual([record.state, record.attempts.length], ["withdrawn", 0]);
  await page.waitForFunction((id) => document.querySelector(`.card[data-request-id="${id}"]`)?.dataset.status, queued, { timeout: 10_000 });
  const second = page.locator(`.card[data-request-id="${queued}"]`);
  assert.match(await second.locator("[data-testid=outcome]").textContent(), /Withdrawn|Queued: nothing was sent yet/);
  await page.waitForFunction(() => document.querySelectorAll(".card")[1]?.dataset.status === "succeeded", null, { timeout: 20_000 });
  await env.gateway.idle();
  assert.equal(await stored(account, queued), 0, "the withdrawn lock never reached history");
  await page.screenshot({ path: join(artifacts, "scope-withdrawn.png"), fullPage: true });
  await context.close();
});
