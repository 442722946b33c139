// Confirmation at scale, in real Chromium against the gateway: 100 creates
// whose answers are lost while the event history is down (every query
// fails), so all 100 escalate; then an idle minute, history still down;
// then history comes back. Counted by the gateway's record of what arrived
// (every event query naming these accounts), the page's main-thread time
// by the browser's own metrics. In one tab, and in two tabs sharing the
// journal (the same totals: one probe across them).
import { test } from "node:test";
import assert from "node:assert/strict";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";

const env = gatewayAndChromium({ quiet: true });

/** Event queries that reached the gateway naming an account of `prefix`, from sequence `since`: `{ n, next }`. */
async function queries(prefix, since = 0) {
  const r = await fetch(`${env.gateway.base}/__gateway/arrivals?contains=${encodeURIComponent(prefix)}&since=${since}`);
  const { arrivals, next } = await r.json();
  return { n: arrivals.filter((a) => /\/event\/(count|list)$/.test(a.path)).length, next };
}

/** A tab with `window.client` in namespace `ns`, its telemetry in `window.told`. */
async function tab(context, ns) {
  const page = await context.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${env.gateway.base}/pkg/index.js`);
  await page.evaluate(async (ns) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    window.told = [];
    window.escalations = 0;
    window.client = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: ns,
      timeoutMs: 4_000, retry: { baseMs: 50 }, onHistory: (e) => { window.told.push(e); },
      onEscalated: () => { window.escalations++; } });
  }, ns);
  return page;
}

/** A reader of the page's main-thread task time so far, ms (Chromium's own metric, from one session). */
async function mainThread(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  return async () => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    return metrics.find((m) => m.name === "TaskDuration").value * 1000;
  };
}

/** Sends `n` creates of accounts `prefix-i` (from `from`) in `page` at once; resolves when every call settled. */
const createAll = (page, prefix, from, n) => page.evaluate(async ([prefix, from, n]) => {
  const outcomes = await Promise.all(Array.from({ length: n }, (_, i) => window.client.send({
    aggregate: { resource: "account", id: `${prefix}-${from + i}` }, action: "create_account", create: true,
    body: { name: `${prefix}-${from + i}`, balance: 10 } })));
  return outcomes.map((o) => o.status);
}, [prefix, from, n]);

const states = (page) => page.evaluate(async () => (await window.client.intents()).map((r) => r.state));

async function scenario(tabs, perTab) {
  const prefix = unique("hist");
  const context = await env.browser.newContext();
  const ns = unique("history");
  const pages = [];
  for (let i = 0; i < tabs; i++) pages.push(await tab(context, ns));
  const total = tabs * perTab;
  await env.gateway.faults("POST", { rules: [
    { match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable" },
    { match: { method: "POST", path: "/account/create_account" }, fault: "drop_response_after_append" },
  ] });

  // Escalating them all.
  const statuses = (await Promise.all(pages.map((p, i) => createAll(p, prefix, i * perTab, perTab)))).flat();
  assert.deepEqual([...new Set(statuses)], ["escalated"], `every call escalated: ${statuses}`);
  const escalating = await queries(prefix);
  const escalations = (await Promise.all(pages.map((p) => p.evaluate(() => window.escalations)))).reduce((a, b) => a + b);
  assert.equal(escalations, total, "the escalation callback is told once per intent");
  const down = await pages[0].evaluate(() => window.client.history);
  assert.equal(down.available, false, JSON.stringify(down));
  const record = (await pages[0].evaluate(async () => (await window.client.intents())[0]));
  assert.match(record.reason, /history unavailable since \d{4}-\d\d-\d\dT[\d:.]+Z, next look at \d{4}-/, record.reason);

  // One idle minute, history still down.
  const clocks = await Promise.all(pages.map(mainThread));
  const before = await Promise.all(clocks.map((c) => c()));
  await new Promise((r) => setTimeout(r, 60_000));
  const after = await Promise.all(clocks.map((c) => c()));
  const idle = await queries(prefix, escalating.next);
  const busy = after.map((a, i) => a - before[i]);
  assert.deepEqual([...new Set((await Promise.all(pages.map(states))).flat())], ["escalated"]);

  // History comes back.
  await env.gateway.faults("DELETE");
  const backAt = Date.now();
  for (;;) {
    const s = await states(pages[0]);
    if (s.length === total && s.every((x) => x === "succeeded")) break;
    if (Date.now() - backAt > 60_000) throw new Error(`not all confirmed a minute after history came back: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const confirmedInMs = Date.now() - backAt;
  const back = await queries(prefix, idle.next);
  for (let i = 0; i < total; i++) {
    const records = await pages[0].evaluate(async (id) => (await window.client.intents())
      .filter((r) => r.aggregate.aggregateId === id), `${prefix}-${i}`);
    assert.equal(records.length, 1);
    assert.equal(await env.gateway.stored("account", `${prefix}-${i}`, records[0].requestId), 1, "one stream each");
  }
  const told = await pages[0].evaluate(() => window.told.map((e) => e.kind));
  await context.close();
  const figures = { escalating: escalating.n, idleMinute: idle.n, mainThreadMs: busy.map(Math.round), back: back.n, confirmedInMs };
  console.log(`${tabs} tab(s), ${total} escalated intents: ${JSON.stringify(figures)}`);
  return { ...figures, told };
}

test("100 lost answers while history is down: few queries to escalate, a probe while it stays down, one look when it is back", async () => {
  const f = await scenario(1, 100);
  assert.ok(f.escalating <= 50, `escalating the 100: ${f.escalating} queries (≤ 50)`);
  assert.ok(f.idleMinute <= 20, `history down, one idle minute: ${f.idleMinute} queries (≤ 20)`);
  assert.ok(f.mainThreadMs[0] <= 300, `main thread in that minute: ${f.mainThreadMs[0]} ms (≤ 300)`);
  assert.ok(f.confirmedInMs <= 40_000, `all confirmed ${f.confirmedInMs} ms after history came back (≤ 40 s)`);
  assert.ok(f.back <= 10, `history back: ${f.back} queries (≤ 10)`);
  assert.ok(f.told.includes("historyDown") && f.told.at(-1) === "historyBack", `telemetry: ${f.told}`);
});

test("two tabs sharing the journal: one probe across them, the same totals", async () => {
  const f = await scenario(2, 50);
  assert.ok(f.escalating <= 50, `escalating the 100: ${f.escalating} queries (≤ 50)`);
  assert.ok(f.idleMinute <= 20, `history down, one idle minute, both tabs: ${f.idleMinute} queries (≤ 20)`);
  assert.ok(f.mainThreadMs.reduce((a, b) => a + b) <= 300, `main thread in that minute, both tabs: ${f.mainThreadMs} ms (≤ 300)`);
  assert.ok(f.confirmedInMs <= 40_000, `all confirmed ${f.confirmedInMs} ms after history came back (≤ 40 s)`);
  assert.ok(f.back <= 10, `history back: ${f.back} queries (≤ 10)`);
});

test("a send's announcements never wake the history probe: it hears a channel of its own", async () => {
  const context = await env.browser.newContext();
  // Every message a BroadcastChannel of the page delivers, counted.
  await context.addInitScript(() => {
    const Channel = BroadcastChannel;
    window.deliveries = 0;
    globalThis.BroadcastChannel = class extends Channel {
      set onmessage(f) { super.onmessage = (e) => { window.deliveries++; f(e); }; }
      get onmessage() { return super.onmessage; }
    };
  });
  const page = await tab(context, unique("quiet"));
  const delivered = await page.evaluate(async (id) => {
    await window.client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account", create: true,
      body: { name: id, balance: 100 } });
    for (let i = 0; i < 20; i++) {
      await window.client.sendAndWait({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } });
    }
    await new Promise((r) => setTimeout(r, 200));
    return window.deliveries;
  }, unique("acct"));
  // The intents' own channel is still heard by whoever subscribes.
  const heard = await page.evaluate(async () => {
    const events = [];
    const stop = window.client.subscribe((e) => events.push(e.state));
    await window.client.send({ aggregate: { resource: "account", id: `${crypto.randomUUID()}` }, action: "create_account",
      create: true, body: { name: "x", balance: 1 } });
    await new Promise((r) => setTimeout(r, 200));
    stop();
    return events;
  });
  assert.equal(delivered, 0, "21 sends woke no listener of the page (the probe's listened to every announcement: 2 a send)");
  assert.ok(heard.includes("succeeded"), `a subscriber hears the intents: ${heard}`);
  await context.close();
});

test("a leader that never looks (a frozen tab holding the probe's lock): another tab's calls settle, and its escalated intent is confirmed once history is back", async () => {
  const context = await env.browser.newContext();
  const ns = unique("frozen");
  // A tab of the same origin takes the probe's lock and never lets go, as a
  // tab the browser froze in the background, or one whose lock outlived it.
  const holder = await context.newPage();
  await holder.goto(`${env.gateway.base}/pkg/index.js`);
  await holder.evaluate((ns) => new Promise((held) => navigator.locks.request(
    `wow-command-client/${ns}/history/${location.origin}`, () => { held(); return new Promise(() => {}); })), ns);
  const page = await tab(context, ns);
  const prefix = unique("frozen");
  await env.gateway.faults("POST", { rules: [
    { match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable" },
    { match: { method: "POST", path: "/account/create_account" }, fault: "drop_response_after_append" },
  ] });
  const settled = (from, n) => Promise.race([createAll(page, prefix, from, n),
    new Promise((r) => setTimeout(() => r("did not settle in 60 s"), 60_000))]);
  const down = await settled(0, 3);
  assert.deepEqual(down, ["escalated", "escalated", "escalated"], "each call settles while no tab can lead");
  const locks = await page.evaluate(() => navigator.locks.query());
  assert.ok(locks.held.some((l) => l.name.includes("/history/")), "the probe's lock is still the frozen tab's");
  await env.gateway.faults("DELETE");
  // History is back, and this tab still believes it is down: an answer lost
  // now settles (confirmed by its own look, or escalated when that look is
  // further away than a drive waits).
  await env.gateway.faults("POST", { rules: [
    { match: { method: "POST", path: "/account/create_account" }, fault: "drop_response_after_append" },
  ] });
  const [fourth] = await settled(3, 1);
  assert.ok(["succeeded", "escalated"].includes(fourth), fourth);
  await env.gateway.faults("DELETE");
  const backAt = Date.now();
  for (;;) {
    const s = await states(page);
    if (s.length === 4 && s.every((x) => x === "succeeded")) break;
    if (Date.now() - backAt > 60_000) throw new Error(`the escalated intents were not confirmed: ${JSON.stringify(s)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  for (let i = 0; i < 4; i++) {
    const [record] = await page.evaluate(async (id) => (await window.client.intents())
      .filter((r) => r.aggregate.aggregateId === id), `${prefix}-${i}`);
    assert.equal(await env.gateway.stored("account", `${prefix}-${i}`, record.requestId), 1, "one stream each");
  }
  await context.close();
});

test("a client freed while its probe waits for the lock: the lock, granted later, is let go at once", async () => {
  const context = await env.browser.newContext();
  const ns = unique("freed");
  const name = (origin) => `wow-command-client/${ns}/history/${origin}`;
  const holder = await context.newPage();
  await holder.goto(`${env.gateway.base}/pkg/index.js`);
  await holder.evaluate((name) => new Promise((held) => navigator.locks.request(name,
    () => { held(); return new Promise((release) => { window.release = release; }); })), name(new URL(env.gateway.base).origin));
  const page = await tab(context, ns);
  await env.gateway.faults("POST", { rules: [
    { match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable" },
    { match: { method: "POST", path: "/account/create_account" }, fault: "drop_response_after_append" },
  ] });
  try {
    assert.deepEqual(await createAll(page, unique("freed"), 0, 1), ["escalated"]);
    const asked = await holder.evaluate(() => navigator.locks.query());
    assert.equal(asked.pending.filter((l) => l.name.includes("/history/")).length, 1, "the escalated intent's probe asks for the lock");
    await page.evaluate(() => window.client.free());
    await holder.evaluate(() => window.release());
    await new Promise((r) => setTimeout(r, 500));
    const after = await holder.evaluate(() => navigator.locks.query());
    assert.deepEqual([...after.held, ...after.pending].filter((l) => l.name.includes("/history/")), [],
      "granted to the freed client, and let go at once");
  } finally {
    await env.gateway.faults("DELETE");
    await context.close();
  }
});
