// An intent whose handling stops the module twice is set aside
// (src/web/instance.js), in Chromium, Firefox and WebKit against the
// gateway. The page's clock is broken the way a bad polyfill would be: it
// throws when the module reads it just as one intent's Web Lock is granted,
// so the module stops while handling that intent, and again when its fresh
// instance resumes it. Then it is moved where unreadable records go: the
// third instance does not drive it (no third stop), `onRestart` names it,
// `quarantined()` lists it, and it was sent at most once (its first
// attempt may leave before its lock is granted). The client goes on: the next send
// succeeds.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount, startGateway } from "../support/gateway.mjs";
import { engines, launch, ready } from "../support/engines.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

// Runs in the page.
async function scenario({ ns, bad, good }) {
  const { default: init, WowClient } = await import("/pkg/index.js");
  await init();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const command = (id) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1, note: "twice" } });
  // The broken clock: armed when the bad intent's lock is granted, it throws
  // at the module's next read of it (a read from the module's own frames).
  let target = null, armed = false, thrown = 0;
  const request = LockManager.prototype.request;
  navigator.locks.request = function (name, ...rest) {
    const cb = rest[rest.length - 1];
    // The first intent lock of the namespace is the bad intent's (sent first, alone).
    if (!target && name.startsWith(`wow-command-client/${ns}/`)) target = name;
    rest[rest.length - 1] = (lock) => { if (lock && name === target) armed = true; return cb(lock); };
    return request.call(this, name, ...rest);
  };
  const now = Date.now;
  Date.now = function () {
    if (armed && /wasm/i.test(new Error().stack)) { armed = false; thrown++; throw new Error("the clock broke"); }
    return now.call(Date);
  };
  const restarts = [];
  const client = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 8_000, retry: { baseMs: 50 },
    onRestart: (e) => { restarts.push(e); } });
  let ended;
  client.send(command(bad)).then((o) => { ended = { status: o.status, code: o.error?.errorCode ?? null }; });
  for (let i = 0; i < 400 && restarts.length < 2; i++) await sleep(10);
  // A third stop, had anything driven it again, comes within this pause.
  await sleep(1_500);
  const quarantined = await client.quarantined();
  const listed = (await client.intents()).map((r) => r.intentId);
  const next = await client.sendAndWait(command(good));
  await client.resume();
  await sleep(300);
  Date.now = now;
  navigator.locks.request = request;
  return { intentId: target?.split("/").pop() ?? null, ended, thrown, restarts: restarts.map((e) => ({ reason: e.reason, setAside: e.setAside })),
    quarantined: quarantined.map((q) => q.key), listed, next: next.succeeded, nextRequestId: next.requestId };
}

for (const engine of engines) {
  test(`${engine}: an intent whose handling stops the module twice is set aside; the client goes on`, { timeout: 120_000 }, async (t) => {
    if (!ready(t, engine)) return;
    const browser = await launch(engine);
    try {
      const [bad, good] = [await createAccount(gateway.base, "twice"), await createAccount(gateway.base, "twice")];
      const page = await browser.newPage();
      await page.goto(`${gateway.base}/pkg/index.js`);
      await page.evaluate((arg) => {
        window.result = undefined;
        (0, eval)(`(${arg.scenario})`)(arg).then((r) => { window.result = r; }, (e) => { window.result = { error: `${e}\n${e && e.stack}` }; });
      }, { scenario: String(scenario), ns: `twice-${Math.random().toString(36).slice(2, 10)}`, bad, good });
      const r = await page.waitFor(() => window.result, null, 90_000);
      if (process.env.TRAP_DEBUG) console.log(JSON.stringify(r));
      assert.ok(!r.error, r.error);
      assert.ok(r.intentId, "the bad intent was written");
      assert.deepEqual(r.ended, { status: "unknown", code: "ModuleRestarted" }, "its call settled at the first stop");
      assert.equal(r.thrown, 2, "the module read the broken clock twice over it, not a third time");
      assert.equal(r.restarts.length, 2, JSON.stringify(r.restarts));
      for (const e of r.restarts) assert.match(e.reason, /the clock broke/);
      assert.deepEqual(r.restarts.map((e) => e.setAside), [[], [r.intentId]], "named once it stopped the module twice");
      assert.equal(r.quarantined.length, 1, JSON.stringify(r.quarantined));
      assert.ok(r.quarantined[0].endsWith(`/${r.intentId}`), r.quarantined[0]);
      assert.ok(!r.listed.includes(r.intentId), "no longer among the intents");
      assert.equal(r.next, true, "the next send succeeded");
      await gateway.idle();
      assert.equal(await gateway.stored("account", good, r.nextRequestId), 1);
      // A new intent's first attempt may leave before its lock is granted (no
      // other tab knows it yet): sent once at most, never again once set aside.
      const { arrivals } = await (await fetch(`${gateway.base}/__gateway/arrivals?contains=${bad}`)).json();
      const sends = arrivals.filter((a) => a.method === "POST" && a.requestId);
      assert.ok(sends.length <= 1, `the set-aside intent was sent at most once: ${JSON.stringify(sends)}`);
      assert.ok(await gateway.stored("account", bad, r.intentId) <= 1);
      await page.close();
    } finally {
      await browser.close();
    }
  });
}
