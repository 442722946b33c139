// `wow-command-client/react` where a React user meets it: a React 19 app built
// by Vite (tests/react/app, with the generated command builders), in headless
// Chromium against the gateway. A lost answer shows sending -> unknown ->
// succeeded in the component and in a second tab's list; a reload in the
// middle of a send shows the same intent finish in the new page; unmounting
// the sender changes nothing about the outcome, nor does a telemetry listener
// that throws; and the entry renders on a server without touching `window`.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { launchChromium } from "../support/browser.mjs";
import { root, startGateway } from "../support/gateway.mjs";

const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/** The app, as a user's project has it: the package installed, React beside it. */
async function bundle() {
  const app = mkdtempSync(join(tmpdir(), "wow-react-app-"));
  cpSync(new URL("./app", import.meta.url).pathname, app, { recursive: true });
  cpSync(join(root, "www/generated"), join(app, "generated"), { recursive: true });
  mkdirSync(join(app, "node_modules"));
  cpSync(join(root, "pkg"), join(app, "node_modules/wow-command-client"), { recursive: true, dereference: true });
  for (const dep of ["react", "react-dom", "scheduler"]) symlinkSync(join(root, "node_modules", dep), join(app, "node_modules", dep), "dir");
  const out = join(app, "dist");
  await build({ root: app, logLevel: "warn", build: { outDir: out, target: "es2022" } });
  return out;
}

let gateway, browser;
before(async () => {
  gateway = await startGateway({ www: await bundle(), quiet: true });
  browser = await launchChromium();
});
after(async () => { await browser?.close(); await gateway?.stop(); });

/** A page of the app, connected (its provider's client is there). */
async function open(context, query) {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${gateway.base}/?${query}`);
  await page.waitForSelector("#ready[data-ready=yes]", { state: "attached", timeout: 20_000 });
  return page;
}

const data = (page, selector, name) => page.$eval(selector, (el, name) => el.dataset[name], name);
const seen = async (page, selector) => JSON.parse(await data(page, selector, "seen"));
/** Waits until the element's `data-state` is `state`. */
const reaches = (page, selector, state, timeout = 20_000) =>
  page.waitForSelector(`${selector}[data-state=${state}]`, { state: "attached", timeout });

/** A fresh context's page for a fresh cart whose first command is delayed `delayMs`, its send clicked: resolves once it is sending. */
async function sending(prefix, delayMs) {
  const context = await browser.newContext();
  const owner = unique(prefix);
  await gateway.faults("POST", { rules: [{ match: { aggregateId: owner }, fault: "delay", delayMs, times: 1 }] });
  const page = await open(context, `owner=${owner}`);
  await page.click("#add");
  await reaches(page, "#sender", "sending");
  return { context, owner, page, intentId: await data(page, "#sender", "intent") };
}

/** The intent's record in the page's useIntents list, once it shows it succeeded. */
async function listedSucceeded(page, intentId) {
  await page.waitForFunction((id) => JSON.parse(document.querySelector("#outbox").dataset.records)
    .some((r) => r.intentId === id && r.state === "succeeded"), intentId, { timeout: 20_000 });
  return JSON.parse(await data(page, "#outbox", "records")).find((r) => r.intentId === intentId);
}

test("a lost answer: the component shows sending -> unknown -> succeeded, a second tab's list follows, one stream in history", async () => {
  const context = await browser.newContext();
  const owner = unique("react");
  await gateway.faults("POST", { rules: [
    { match: { aggregateId: owner }, fault: "drop_response_after_append", times: 1 },
    // The first two confirmations fail too (the event queries are per aggregate type:
    // `/cart/event/count`), so `unknown` lasts two backoffs, long enough to be rendered
    // however fast the rest is.
    { match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable", times: 2 },
  ] });
  const [sender, other] = [await open(context, `owner=${owner}`), await open(context, `owner=${owner}`)];
  const sent = [];
  sender.on("request", (r) => { if (r.url().includes(`/owner/${owner}/cart/`)) sent.push(r.headers().traceparent); });
  await sender.click("#add");
  await reaches(sender, "#sender", "succeeded");
  const states = await seen(sender, "#sender");
  const order = ["sending", "unknown", "succeeded"].map((s) => states.indexOf(s));
  assert.ok(order.every((i, n) => i >= 0 && (n === 0 || i > order[n - 1])), `sending, unknown, succeeded in order: ${states}`);
  assert.equal(states[0], "idle");
  const intentId = await data(sender, "#sender", "intent");

  // The other tab's useIntents list had it unconfirmed, then succeeded.
  await listedSucceeded(other, intentId);
  const listed = (await seen(other, "#outbox")).map((s) => Object.fromEntries(JSON.parse(s))[intentId]).filter(Boolean);
  assert.ok(listed.some((s) => s !== "succeeded"), `the list showed it before it settled: ${listed}`);
  assert.equal(listed.at(-1), "succeeded");
  assert.equal(await data(other, "#outbox", "open"), "0");

  const record = await listedSucceeded(sender, intentId);
  await gateway.idle();
  assert.equal(await gateway.stored("cart", owner, record.requestId), 1);
  const { rules } = await gateway.faults("GET");
  assert.deepEqual(rules.map((r) => r.times), [0, 0], "the answer was dropped and two confirmations failed");

  // Telemetry, through a listener that throws: the attempt, the confirmations, the outcome; the
  // attempt's traceparent on the wire is the intent's trace.
  const told = await sender.evaluate((id) => window.telemetry.filter((e) => e.intentId === id), intentId);
  const kinds = told.map((e) => e.kind);
  for (const kind of ["attemptSent", "attemptEnded", "confirmAsked", "confirmAnswered", "outcome"]) assert.ok(kinds.includes(kind), `${kind} in ${kinds}`);
  assert.deepEqual(told.filter((e) => e.kind === "confirmAnswered").map((e) => e.answerOfHistory), ["unavailable", "unavailable", "appended"]);
  assert.equal(told.at(-1).state, "succeeded");
  const traceparent = told.find((e) => e.kind === "attemptSent").traceparent;
  assert.match(traceparent, new RegExp(`^00-${record.requestId.replaceAll("-", "")}-[0-9a-f]{16}-01$`));
  assert.ok(sent.includes(traceparent), `sent with the request: ${sent}`);
  await context.close();
});

test("a reload in the middle of a send: the new page's useIntent shows the same intent finish", async () => {
  const { context, owner, page, intentId } = await sending("reload", 2_500);
  assert.ok(page.url().includes(`intent=${intentId}`), page.url());
  await page.reload();
  await page.waitForSelector("#ready[data-ready=yes]", { state: "attached", timeout: 20_000 });
  await reaches(page, "#watched", "succeeded");
  const watched = await seen(page, "#watched");
  assert.equal(watched.at(-1), "succeeded");
  assert.ok(!watched.includes("absent"), `the journal had it all along: ${watched}`);
  assert.equal(await data(page, "#sender", "state"), "idle", "the new page's sender has sent nothing");
  await gateway.idle();
  assert.equal(await gateway.stored("cart", owner, await data(page, "#watched", "request")), 1);
  await context.close();
});

test("unmounting the sender mid-flight stops the observation, not the intent", async () => {
  const { context, owner, page, intentId } = await sending("unmount", 1_500);
  await page.click("#hide");
  assert.equal(await page.$("#sender"), null);
  const record = await listedSucceeded(page, intentId);
  await gateway.idle();
  assert.equal(await gateway.stored("cart", owner, record.requestId), 1);
  await context.close();
});

test("a journal of 10,000 intents: a new command costs a few journal reads, not the journal; useIntent never shows another key's record", async () => {
  const context = await browser.newContext();
  const owner = unique("many");
  const page = await open(context, `owner=${owner}&journal=10000&switch=old-000007,old-009998,old-000007`);
  await page.waitForFunction(() => JSON.parse(document.querySelector("#outbox").dataset.records).length === 10_000,
    null, { timeout: 30_000 });
  const seeded = await page.evaluate(() => ({ ...window.reads }));
  // Three reads of the journal (each lists its records and its quarantine): connect's check of
  // the storage, resume(), and one read for all the hooks (three of them, under StrictMode).
  assert.ok(seeded.listed <= 3 * 10_000, `one read seeds every hook: ${JSON.stringify(seeded)}`);

  // A new command, with a list of everything and one useIntent mounted.
  await page.click("#add");
  await reaches(page, "#sender", "succeeded");
  const intentId = await data(page, "#sender", "intent");
  await listedSucceeded(page, intentId);
  const after = await page.evaluate(() => ({ ...window.reads }));
  const cost = { list: after.list - seeded.list, get: after.get - seeded.get };
  assert.equal(cost.list, 0, `no whole-journal read for a change: ${JSON.stringify(cost)}`);
  assert.ok(cost.get <= 8, `a few reads of the one intent per change, whatever the journal's size: ${JSON.stringify(cost)}`);
  assert.equal(JSON.parse(await data(page, "#outbox", "records")).length, 10_001);

  // Pointed at another key, then back: only the record of the key asked for (or nothing yet).
  for (let i = 0; i < 2; i++) await page.click("#switch");
  await page.waitForFunction(() => document.querySelector("#switcher").dataset.at === "2");
  const shown = JSON.parse(await data(page, "#switcher", "shown"));
  const wrong = shown.filter(([key, id]) => id !== "undefined" && id !== key);
  assert.deepEqual(wrong, [], `every render showed the asked-for intent: ${JSON.stringify(shown)}`);
  assert.deepEqual([...new Set(shown.map(([key]) => key))], ["old-000007", "old-009998"]);
  assert.ok(shown.some(([key, id]) => key === "old-009998" && id === "old-009998"), "the second key's record was shown");
  await gateway.idle();
  assert.equal(await gateway.stored("cart", owner, JSON.parse(await data(page, "#outbox", "records"))
    .find((r) => r.intentId === intentId).requestId), 1);
  await context.close();
});

test("a scope: the second command shows queued until the first is done, a third is withdrawn and shows it; history holds them in order, the withdrawn one never", async () => {
  const context = await browser.newContext();
  const owner = unique("scoped");
  // The first command is held 2.5 s at the gateway: the others queue behind it.
  await gateway.faults("POST", { rules: [{ match: { aggregateId: owner }, fault: "delay", delayMs: 2_500, times: 1 }] });
  const page = await open(context, `owner=${owner}&scoped=3`);
  await page.click("#add-1");
  await reaches(page, "#scoped-1", "sending");
  await page.click("#add-2");
  await reaches(page, "#scoped-2", "queued");
  await page.click("#add-3");
  await reaches(page, "#scoped-3", "queued");
  await page.click("#withdraw-3");
  await reaches(page, "#scoped-3", "withdrawn").catch(async (e) => {
    throw new Error(`${e.message}: ${await data(page, "#scoped-3", "seen")} ${await data(page, "#scoped-3", "error")}`);
  });
  await reaches(page, "#scoped-1", "succeeded");
  await reaches(page, "#scoped-2", "succeeded");
  const second = await seen(page, "#scoped-2");
  assert.ok(second.indexOf("queued") >= 0 && second.indexOf("queued") < second.indexOf("succeeded"),
    `queued, then succeeded: ${second}`);
  assert.equal(second.at(-1), "succeeded");
  const third = await seen(page, "#scoped-3");
  assert.equal(third.at(-1), "withdrawn", `the journal's word stays: ${third}`);
  assert.ok(!third.includes("sending"), `never sent: ${third}`);
  assert.equal(await data(page, "#scoped-3", "error"), "Withdrawn");
  await gateway.idle();
  const records = JSON.parse(await data(page, "#outbox", "records"));
  const requestOf = (n) => page.$eval(`#scoped-${n}`, (el) => el.dataset.intent)
    .then((id) => records.find((r) => r.intentId === id).requestId);
  const [first, next, withdrawn] = [await requestOf(1), await requestOf(2), await requestOf(3)];
  const held = await gateway.history("cart", owner);
  assert.deepEqual(held, [first, next], "in the order written, each once; the withdrawn one never");
  assert.equal(held.includes(withdrawn), false);
  await context.close();
});

test("a user who signs in after another: the provider connects again as them, and the hooks show only their intents", async () => {
  const context = await browser.newContext();
  const owner = unique("react-users");
  const page = await open(context, `owner=${owner}&user=alice&next=bob`);
  await page.click("#add");
  await reaches(page, "#sender", "succeeded");
  const alices = await data(page, "#sender", "intent");
  await listedSucceeded(page, alices);
  // Bob signs in on the same page: a new client, Alice's intent no longer listed.
  await page.click("#sign-in-as");
  await page.waitForFunction((id) => {
    const outbox = document.querySelector("#outbox");
    return document.querySelector("#ready")?.dataset.ready === "yes"
      && !JSON.parse(outbox.dataset.records).some((r) => r.intentId === id);
  }, alices, { timeout: 20_000 });
  await page.click("#add");
  await page.waitForFunction((id) => {
    const sender = document.querySelector("#sender");
    return sender.dataset.state === "succeeded" && sender.dataset.intent !== id;
  }, alices, { timeout: 20_000 });
  const bobs = await data(page, "#sender", "intent");
  await listedSucceeded(page, bobs);
  const listed = JSON.parse(await data(page, "#outbox", "records")).map((r) => r.intentId);
  assert.deepEqual(listed, [bobs], "only Bob's intent is listed for Bob");
  // Alice's tab, still open, lists hers and not Bob's.
  const alicePage = await open(context, `owner=${owner}&user=alice`);
  await listedSucceeded(alicePage, alices);
  assert.deepEqual(JSON.parse(await data(alicePage, "#outbox", "records")).map((r) => r.intentId), [alices]);
  await context.close();
});

test("server rendering: the entry imports and renders in Node.js without a window, nothing connects", async () => {
  const { createElement: h } = await import("react");
  const { renderToString } = await import("react-dom/server");
  const react = await import(join(root, "pkg/react.js"));
  let connected = false;
  const Probe = () => {
    const command = react.useCommand();
    const list = react.useIntents();
    const one = react.useIntent("some-intent");
    const { client } = react.useWowClient();
    return h("p", null, `${command.state}|${list.length}|${one}|${client}`);
  };
  const html = renderToString(h(react.WowProvider, { options: { get baseUrl() { connected = true; return "http://x"; } } }, h(Probe)));
  assert.equal(typeof globalThis.window, "undefined");
  assert.match(html, /idle\|0\|undefined\|null/);
  assert.equal(connected, false, "connect options are not even read while rendering");
  assert.throws(() => renderToString(h(Probe)), /must be used inside <WowProvider>/);
  // A filter key useIntents does not know is refused, as client.subscribe refuses it, not read as "no filter".
  const Misspelt = () => h("p", null, String(react.useIntents({ state: ["succeeded"] }).length));
  assert.throws(() => renderToString(h(react.WowProvider, { options: {} }, h(Misspelt))),
    (e) => e instanceof TypeError && e.message === "useIntents: filter.state is not an option (known: intentId, intentKey, states)");
});
