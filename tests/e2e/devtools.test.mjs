// The devtools panel (`wow-command-client/devtools`), in Chromium, Firefox
// and WebKit against the gateway. One tab shows the panel; a second tab of
// the same browser context sends. The panel lists what the other tab wrote,
// live; a lost answer shows unknown (history down for a moment) and then
// succeeded without a reload; an intent withdrawn from the panel is never
// sent (the gateway's arrivals log); the export holds what it says and no
// body unless asked; axe-core finds no WCAG 2 A/AA violation in it. In
// Chromium, under a strict Content-Security-Policy (no inline style), the
// panel is styled and nothing is refused. In Node, importing the entry
// touches no browser API.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createAccount, root, startGateway } from "../support/gateway.mjs";
import { engines, launch, ready } from "../support/engines.mjs";

const axeSource = readFileSync(`${root}/node_modules/axe-core/axe.min.js`, "utf8");
let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

// Runs `fn(arg)` (an async function, as text) in `page`, returning its JSON result.
async function run(page, fn, arg = {}, timeoutMs = 60_000) {
  await page.evaluate((a) => {
    window.result = undefined;
    (0, eval)(`(${a.fn})`)(a.arg).then((r) => { window.result = { ok: r ?? null }; }, (e) => { window.result = { error: `${e}\n${e && e.stack}` }; });
  }, { fn: String(fn), arg });
  const r = await page.waitFor(() => window.result, null, timeoutMs);
  assert.ok(!r.error, r.error);
  return r.ok;
}

// In the panel's tab: a client, the panel mounted open, and a recorder of
// every state each row showed (read from the panel's own DOM).
async function mountPanel({ ns }) {
  const { default: init, WowClient } = await import("/pkg/index.js");
  const { mountDevtools } = await import("/pkg/devtools.js");
  await init();
  const client = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 8_000, retry: { baseMs: 50 } });
  const { element } = mountDevtools(client, { open: true, remember: false });
  window.panel = element;
  window.seen = {};
  window.pageMark = Math.random();
  setInterval(() => {
    for (const row of element.shadowRoot.querySelectorAll(".row")) {
      const list = (window.seen[row.dataset.id] ??= []);
      const state = row.querySelector(".badge").textContent;
      if (list[list.length - 1] !== state) list.push(state);
    }
  }, 10);
  return { mark: window.pageMark };
}

// The panel's rows and states as they are drawn now (newest first).
function rows() {
  const r = [...window.panel.shadowRoot.querySelectorAll(".row")].map((row) => [row.dataset.id, row.querySelector(".badge").textContent]);
  for (const [id, state] of r) {
    const list = (window.seen[id] ??= []);
    if (list[list.length - 1] !== state) list.push(state);
  }
  return Promise.resolve({ rows: r, mark: window.pageMark, status: window.panel.shadowRoot.querySelector(".status").textContent });
}

// In the other tab: a client of the same journal that sends.
async function sender({ ns, account, scoped, held }) {
  const { default: init, WowClient } = await import("/pkg/index.js");
  await init();
  const client = (window.client ??= await WowClient.connect({ user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 8_000, retry: { baseMs: 50 } }));
  const command = (id, note) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1, note } });
  const ids = {};
  if (scoped) {
    // The first is held by the gateway, so the second waits queued behind it.
    window.firstDone = client.send({ ...command(held, "first"), scope: `s-${held}` }, { onIntent: (id) => { ids.first = id; } });
    window.queuedDone = client.send({ ...command(held, "queued"), scope: `s-${held}` }, { onIntent: (id) => { ids.queued = id; } });
    for (let i = 0; i < 200 && !ids.queued; i++) await new Promise((r) => setTimeout(r, 10));
    const record = await client.intent(ids.queued);
    return { ids, queued: record.state, requestId: record.requestId };
  }
  const outcome = await client.send(command(account, "plain"), { onIntent: (id) => { ids.plain = id; } });
  return { ids, status: outcome.status, requestId: outcome.requestId };
}

for (const engine of engines) {
  test(`${engine}: the devtools panel shows another tab's intents live, withdraws, exports and passes axe`, { timeout: 180_000 }, async (t) => {
    if (!ready(t, engine)) return;
    const browser = await launch(engine);
    try {
      const ns = unique("devtools");
      const [account, lost, held] = [await createAccount(gateway.base, "dt"), await createAccount(gateway.base, "dtlost"), await createAccount(gateway.base, "dtheld")];
      const context = await browser.newContext();
      const panelTab = await context.newPage();
      await panelTab.goto(`${gateway.base}/pkg/index.js`);
      const { mark } = await run(panelTab, mountPanel, { ns });
      const other = await context.newPage();
      await other.goto(`${gateway.base}/pkg/index.js`);

      // 1. Another tab's intent appears, succeeded, without a reload.
      const plain = await run(other, sender, { ns, account });
      assert.equal(plain.status, "succeeded");
      const shows = async (id, state) => {
        for (let i = 0; i < 600; i++) {
          const r = await run(panelTab, rows);
          assert.equal(r.mark, mark, "the panel's page was not reloaded");
          if (r.rows.some(([rid, st]) => rid === id && st === state)) return r;
          await new Promise((res) => setTimeout(res, 50));
        }
        throw new Error(`the panel never showed ${id} ${state}: ${JSON.stringify(await run(panelTab, rows))}`);
      };
      await shows(plain.ids.plain, "succeeded");

      // 2. A lost answer while history is down for a moment: unknown, then succeeded.
      await gateway.faults("POST", { rules: [
        { match: { aggregateId: lost }, fault: "drop_response_after_append", times: 1 },
        { match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable", times: 3 },
      ] });
      const lostOne = await run(other, sender, { ns, account: lost });
      // The call may end escalated (history still down then); the probe confirms it once history answers.
      assert.ok(["succeeded", "escalated"].includes(lostOne.status), lostOne.status);
      await shows(lostOne.ids.plain, "succeeded");
      const seen = await run(panelTab, (id) => Promise.resolve(window.seen[id]), lostOne.ids.plain);
      assert.ok(seen.includes("unknown") || seen.includes("escalated"), `the panel showed it unsure first: ${seen}`);
      assert.equal(seen[seen.length - 1], "succeeded", `${seen}`);
      await gateway.faults("DELETE");

      // 3. Withdraw from the panel: the queued intent is never sent.
      await gateway.faults("POST", { rules: [{ match: { aggregateId: held }, fault: "delay", delayMs: 3_000, times: 1 }] });
      const scoped = await run(other, sender, { ns, held, scoped: true });
      assert.equal(scoped.queued, "queued");
      await shows(scoped.ids.queued, "queued");
      const withdrawn = await run(panelTab, async (id) => {
        const sr = window.panel.shadowRoot;
        const row = [...sr.querySelectorAll(".row")].find((r) => r.dataset.id === id);
        row.querySelector(".open").click();
        const button = [...sr.querySelectorAll(".detail button")].find((b) => b.textContent === "Withdraw");
        button.click();
        for (let i = 0; i < 300 && !/withdraw: /.test(sr.querySelector(".status").textContent); i++) await new Promise((r) => setTimeout(r, 10));
        return sr.querySelector(".status").textContent;
      }, scoped.ids.queued);
      assert.match(withdrawn, /^withdraw: withdrawn$|^withdraw: rejected$/, withdrawn);
      await shows(scoped.ids.queued, "withdrawn");
      const ends = await run(other, async () => {
        const first = await window.firstDone;
        let queued;
        try { queued = await window.queuedDone; } catch (e) { queued = { code: e.code }; }
        return { first: first.status, queued: queued.status ?? queued.code };
      });
      assert.equal(ends.first, "succeeded");
      await gateway.idle();
      const { arrivals } = await (await fetch(`${gateway.base}/__gateway/arrivals?requestId=${scoped.requestId}`)).json();
      assert.equal(arrivals.length, 0, "the withdrawn intent never reached the gateway");

      // 4. The export: what it says, and no body unless asked.
      const exported = await run(panelTab, async () => {
        const plainOne = window.panel.exportDiagnostics();
        const withBodies = window.panel.exportDiagnostics({ bodies: true });
        const button = [...window.panel.shadowRoot.querySelectorAll("button")].find((b) => b.textContent === "Export");
        button.click();
        return { plainOne, withBodies, status: window.panel.shadowRoot.querySelector(".status").textContent };
      });
      const byId = Object.fromEntries(exported.plainOne.intents.map((i) => [i.intentId, i]));
      assert.equal(exported.plainOne.namespace, ns);
      assert.equal(exported.plainOne.intents.length, 4, "every intent of the journal");
      assert.ok(exported.plainOne.intents.every((i) => !("body" in i)), "no body unless asked");
      assert.ok(exported.withBodies.intents.every((i) => i.body?.amount === 1), "bodies when asked");
      const one = byId[plain.ids.plain];
      assert.equal(one.requestId, plain.requestId);
      assert.deepEqual([one.aggregate.aggregateId, one.action, one.state, one.attempts.length], [account, "lock_amount", "succeeded", 1]);
      assert.ok(one.commandIds[0], "the attempt's commandId");
      assert.equal(byId[lostOne.ids.plain].state, "succeeded");
      assert.ok(byId[lostOne.ids.plain].lastResult?.errorCode, "the last CommandResult's code");
      assert.match(exported.status, /exported 4 intents, bodies left out/);

      // 5. Accessibility: the panel with an intent's detail open.
      const axe = await panelTab.evaluate(async (src) => {
        (0, eval)(src);
        const sr = window.panel.shadowRoot;
        if (!sr.querySelector(".detail:not([hidden])")) sr.querySelector(".row .open").click();
        const r = await window.axe.run(window.panel, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
        return { violations: r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`), passes: r.passes.length };
      }, axeSource);
      assert.deepEqual(axe.violations, [], "axe-core found no violation");
      assert.ok(axe.passes > 5, `axe-core checked the panel (${axe.passes} rules passed)`);
      await context.close?.();
    } finally {
      await gateway.faults("DELETE");
      await browser.close();
    }
  });
}

test("node: importing the devtools entry touches no browser API, and mounting where there is no document mounts nothing", async () => {
  const devtools = await import("../../pkg/devtools.js");
  assert.equal(typeof globalThis.document, "undefined");
  assert.deepEqual(Object.keys(devtools).sort(), ["defineDevtools", "diagnostics", "mountDevtools"]);
  const mounted = devtools.mountDevtools({}, { open: true });
  assert.equal(mounted.element, null);
  mounted.unmount();
  assert.equal(devtools.defineDevtools(), "wow-devtools");
  const d = devtools.diagnostics([{ intentId: "i", requestId: "r", aggregate: { resource: "account", aggregateId: "a" }, state: "sending",
    command: { path: "/account/lock_amount", body: { secret: 1 }, wait: { stage: "PROCESSED" } }, attempts: [{ number: 1, sentAt: 1 }], createdAt: 1, updatedAt: 2 }], { now: 0 });
  assert.equal(d.exportedAt, "1970-01-01T00:00:00.000Z");
  assert.deepEqual([d.intents[0].action, d.intents[0].attempts[0].endedAt, "body" in d.intents[0]], ["lock_amount", null, false]);
});

// Chromium (playwright-core): the panel on the demo page, opened by its
// button, under a strict Content-Security-Policy (no inline style): styled,
// and nothing refused. Its picture goes to test-artifacts/devtools.png, or to
// docs/devtools.png with DEVTOOLS_PICTURE=1 (how the guide's picture is taken).
test("chromium: the panel on the demo page, under a strict Content-Security-Policy, opened by its button", { timeout: 120_000 }, async (t) => {
  if (!ready(t, "chromium")) return;
  const { launchChromium } = await import("../support/browser.mjs");
  const { mkdirSync } = await import("node:fs");
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    const ns = unique("devtools-demo");
    await page.goto(`${gateway.base}/?ns=${ns}&noworker`);
    await page.waitForFunction(() => window.demo?.client);
    const violations = await page.evaluate(async () => {
      // A strict policy from here on: styles only from this origin, never inline.
      const meta = document.createElement("meta");
      meta.httpEquiv = "Content-Security-Policy";
      meta.content = "style-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
      document.head.append(meta);
      window.refused = [];
      document.addEventListener("securitypolicyviolation", (e) => window.refused.push(`${e.violatedDirective} ${e.sourceFile}:${e.lineNumber}`));
      // The policy holds: an inline style is refused.
      const probe = document.createElement("div");
      probe.setAttribute("style", "color: red");
      document.body.append(probe);
      await new Promise((r) => setTimeout(r, 50));
      const sanity = window.refused.length;
      window.refused = [];
      const { client } = window.demo;
      const id = `acct-${Math.random().toString(36).slice(2, 8)}`;
      const account = { resource: "account", id };
      await client.sendAndWait({ aggregate: account, action: "create_account", create: true, body: { name: id, balance: 100 } });
      for (const amount of [10, 20]) await client.send({ aggregate: account, action: "lock_amount", body: { amount }, intentKey: `lock-${amount}-${id}` });
      await client.send({ aggregate: account, action: "prepare", method: "POST", body: { to: "x", amount: 1000 } }); // more than the balance: rejected
      return { sanity };
    });
    assert.ok(violations.sanity >= 1, "the policy is in force (an inline style was refused)");
    // The demo mounted the panel: open it with its button, and an intent's detail.
    const fab = page.locator("wow-devtools").locator("button.fab");
    await fab.click();
    await page.locator("wow-devtools").locator(".row").first().waitFor();
    await page.locator("wow-devtools").locator(".row .open").first().click();
    const r = await page.evaluate(() => {
      const host = document.querySelector("wow-devtools");
      const sr = host.shadowRoot;
      return {
        refused: window.refused,
        fabBackground: getComputedStyle(sr.querySelector(".fab")).backgroundColor,
        panelShown: getComputedStyle(sr.querySelector(".panel")).display,
        rows: sr.querySelectorAll(".row").length,
        states: [...sr.querySelectorAll(".row .badge")].map((b) => b.textContent),
        expanded: sr.querySelector(".fab").getAttribute("aria-expanded"),
        detail: sr.querySelector(".detail h3")?.textContent,
      };
    });
    assert.deepEqual(r.refused, [], "nothing of the panel was refused by the policy");
    assert.equal(r.fabBackground, "rgb(31, 41, 55)", "styled from its constructed style sheet");
    assert.equal(r.panelShown, "flex");
    assert.equal(r.expanded, "true");
    assert.equal(r.rows, 4);
    assert.deepEqual([...r.states].sort(), ["rejected", "succeeded", "succeeded", "succeeded"]);
    assert.match(r.detail ?? "", /^account\//);
    const picture = process.env.DEVTOOLS_PICTURE ? join(root, "docs/devtools.png") : join(root, "test-artifacts/devtools.png");
    mkdirSync(dirname(picture), { recursive: true });
    const box = await page.locator("wow-devtools").boundingBox();
    await page.screenshot({ path: picture, clip: { x: box.x - 8, y: box.y - 8, width: box.width + 16, height: box.height + 16 } });
  } finally {
    await browser.close();
  }
});
