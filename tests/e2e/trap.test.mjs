// A trap never kills the client (src/web/instance.js), in Chromium, Firefox,
// WebKit and Node against the gateway. An app deep in its own recursion
// calls the client with little stack left, as a deep component tree or a
// recursive reducer would, until one call runs out of stack inside the
// module: that instance stops. Meanwhile an intent is in flight (the
// gateway holds its answer), its lock held. Then: the waiting call
// settles (ModuleRestarted, or its real outcome); `onRestart` tells the
// restart; in a browser, another tab that asked for the intent's lock
// before the trap is granted it within seconds; the intent is driven by
// the fresh instance (which could not take its lock had the stopped one
// kept it) and lands once; the next
// send on the same client object succeeds; every intent the sweep started
// lands at most once. Node's client keeps a memory journal across it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount as createAccountOn, startGateway, root } from "../support/gateway.mjs";
import { engines, launch, ready } from "../support/engines.mjs";
import { edgeRound } from "../support/edge.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

// Runs in the page (or in Node, with `self` the global): sets up `self.trap`
// and `self.scenario`; `edgeSource` is tests/support/edge.mjs's `edgeRound` as text.
function setup(edgeSource) {
  const edgeRound = (0, eval)(`(${edgeSource})`);
  // Each request's signal, to see that the stop aborts what the stopped instance had in flight.
  self.signals = [];
  const fetch0 = self.fetch;
  // (The module's own .wasm is fetched without one: not the SDK's request.)
  self.fetch = (url, init) => { if (init?.signal) self.signals.push(init.signal); return fetch0(url, init); };
  self.lock = (id, extra = {}) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1, note: "at the edge" }, ...extra });
  // Calls `client.send` from the stack's edge (edgeRound), round after
  // round, until a call runs out inside the module, where it stops
  // (`onRestart` says so).
  self.trap = async (client, restarted, target) => {
    const started = [];
    let tried = 0;
    const call = () => {
      tried++;
      const p = client.send(self.lock(target));
      started.push(p.then((o) => [o.status, o.error?.errorCode ?? null], (e) => ["rejected", e.code ?? e.message]));
      return 0;
    };
    let round = 0;
    for (; round < 60 && !restarted(); round++) {
      edgeRound(call, round);
      await null;
      await null;
    }
    return { at: restarted() ? round : null, tried, started: (await Promise.all(started)).length };
  };

  // What the page or process does, given `client` and its restart events `restarts`.
  self.scenario = async (client, restarts, held, other) => {
    self.outcome = undefined;
    let intentId;
    client.sendAndWait(self.lock(held), { onIntent: (id) => { intentId = id; } })
      .then((r) => { self.outcome = { ok: true, requestId: r.requestId }; },
        (e) => { self.outcome = { ok: false, code: e.code, outcome: e.outcome, intentId: e.intentId, at: Date.now() }; });
    // A stage stream in flight too (the gateway holds its answer as well).
    self.streamed = undefined;
    const stream = client.sendAndWaitStream(self.lock(held));
    stream.outcome.then((o) => { self.streamed = { status: o.status, code: o.error?.errorCode ?? null }; });
    for (let i = 0; i < 200 && !intentId; i++) await new Promise((r) => setTimeout(r, 10));
    // Another tab (tests/e2e: `otherTab`) asks for the intent's lock, held here, and waits.
    let queued = null;
    if (self.BroadcastChannel && self.document) {
      const name = `wow-command-client/${self.namespace}/${intentId}`;
      for (let i = 0; i < 200 && !(await navigator.locks.query()).held.some((l) => l.name === name); i++) await new Promise((r) => setTimeout(r, 10));
      const bc = new BroadcastChannel("trap-other-tab");
      queued = await new Promise((resolve) => {
        bc.onmessage = (e) => resolve(e.data);
        bc.postMessage({ queue: name });
        setTimeout(() => resolve(null), 5_000);
      });
      bc.close();
    }
    const trapAt = Date.now();
    const sentBefore = self.signals.length;
    const sweep = await self.trap(client, () => restarts.length > 0, other);
    const aborted = self.signals.slice(0, sentBefore).filter((s) => s.aborted).length;
    const stoppedAt = Date.now();
    for (let i = 0; i < 300 && !self.outcome; i++) await new Promise((r) => setTimeout(r, 10));
    const waited = self.outcome;
    for (let i = 0; i < 300 && !self.streamed; i++) await new Promise((r) => setTimeout(r, 10));
    const streamed = self.streamed;
    // The in-flight intent is driven again by the fresh instance, under its lock.
    // (The other tab may hold it for a moment as the fresh instance asks: then it asks again.)
    let record;
    for (let i = 0; i < 300; i++) {
      record = (await client.intents()).find((r) => r.intentId === intentId);
      if (record?.state === "succeeded") break;
      if (queued && i % 20 === 19) await client.resume();
      await new Promise((r) => setTimeout(r, 50));
    }
    const next = await client.sendAndWait(self.lock(other));
    const all = (await client.intents()).map((r) => [r.aggregate.aggregateId, r.requestId, r.state]);
    return { sweep, sentBefore, aborted, queued, trapAt, stoppedAt, waited, streamed, settledWithinMs: waited ? waited.at - stoppedAt : null, intentId, state: record?.state,
      requestId: record?.requestId, next: next.succeeded, restarts: restarts.map((e) => [e.kind, e.reason]), all };
  };
}

async function check(r, held) {
  assert.ok(r.sweep.at !== null, `the sweep stopped the module (${JSON.stringify(r.sweep)})`);
  assert.ok(r.restarts.length >= 1 && r.restarts[0][0] === "restarted", JSON.stringify(r.restarts));
  assert.ok(r.waited, "the call waiting on the held intent settled");
  if (!r.waited.ok) {
    assert.equal(r.waited.code, "ModuleRestarted");
    assert.equal(r.waited.outcome, "unknown");
    assert.equal(r.waited.intentId, r.intentId, "the error names the kept intent");
    assert.ok(r.settledWithinMs < 2_000, `settled ${r.settledWithinMs} ms after the restart`);
  }
  assert.ok(r.sentBefore >= 1 && r.aborted === r.sentBefore, `the stopped instance's requests were aborted (${r.aborted} of ${r.sentBefore})`);
  assert.ok(r.streamed, "the stage stream in flight ended");
  assert.ok(r.streamed.status === "succeeded" || r.streamed.code === "ModuleRestarted", JSON.stringify(r.streamed));
  assert.equal(r.state, "succeeded", "the fresh instance took the intent's lock and finished it");
  assert.equal(r.next, true, "the next send on the same client succeeded");
  await gateway.idle();
  assert.equal(await gateway.stored("account", held, r.requestId), 1, "the held intent landed once");
  for (const [id, requestId] of r.all) {
    assert.ok((await gateway.stored("account", id, requestId)) <= 1, `${requestId} landed at most once`);
  }
}

for (const engine of engines) {
  test(`${engine}: a trap at the stack's edge stops only that instance; the client goes on`, { timeout: 180_000 }, async (t) => {
    if (!ready(t, engine)) return;
    const browser = await launch(engine);
    try {
      const [held, other] = [await createAccountOn(gateway.base, "trap"), await createAccountOn(gateway.base, "trap")];
      await gateway.faults("POST", { rules: [{ match: { aggregateId: held }, fault: "delay", delayMs: 2_000, times: 2 }] });
      const context = await browser.newContext();
      // The other tab: asks for a lock when told, and notes when it is granted (and lets it go at once).
      const tab = await context.newPage();
      await tab.goto(`${gateway.base}/pkg/index.js`);
      await tab.evaluate(() => {
        const bc = new BroadcastChannel("trap-other-tab");
        bc.onmessage = async (e) => {
          navigator.locks.request(e.data.queue, () => { window.granted = Date.now(); });
          const pending = (await navigator.locks.query()).pending.some((l) => l.name === e.data.queue);
          bc.postMessage({ pending, grantedBefore: window.granted ?? null });
        };
      });
      const page = await context.newPage();
      await page.goto(`${gateway.base}/pkg/index.js`);
      await page.evaluate(setup, String(edgeRound));
      await page.evaluate(async (ns) => {
        window.namespace = ns;
        const { default: init, WowClient } = await import("/pkg/index.js");
        await init();
        window.restarts = [];
        window.client = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 8_000,
          retry: { baseMs: 50 }, onRestart: (e) => { window.restarts.push(e); } });
      }, unique("trap"));
      // Started in the page and watched from here: WebKit's driver runs one script at a time.
      await page.evaluate(({ held, other }) => {
        window.scenario(window.client, window.restarts, held, other)
          .then((r) => { window.result = r; }, (e) => { window.result = { error: `${e}\n${e && e.stack}` }; });
      }, { held, other });
      const r = await page.waitFor(() => window.result, null, 120_000);
      if (process.env.TRAP_DEBUG) console.log(JSON.stringify(r));
      assert.ok(!r.error, r.error);
      await check(r, held);
      // The other tab's ask waited behind this tab's hold, and was granted once the instance stopped.
      assert.deepEqual(r.queued, { pending: true, grantedBefore: null }, "the other tab asked while the lock was held here");
      const granted = await tab.evaluate(() => window.granted ?? null);
      if (process.env.TRAP_DEBUG) console.log(`${engine}: the other tab was granted the lock ${granted - r.stoppedAt} ms after the sweep, ${granted - r.trapAt} ms after it began`);
      assert.ok(granted !== null && granted >= r.trapAt, `the other tab was granted the intent's lock (${granted}, trap at ${r.trapAt})`);
      assert.ok(granted - r.stoppedAt < 5_000, `within seconds of the stop (${granted - r.stoppedAt} ms after the sweep)`);
      await page.close();
      await tab.close();
    } finally {
      await gateway.faults("DELETE");
      await browser.close();
    }
  });
}

test("node: a trap at the stack's edge; the memory journal and the client go on", { timeout: 120_000 }, async () => {
  const [held, other] = [await createAccountOn(gateway.base, "trap"), await createAccountOn(gateway.base, "trap")];
  await gateway.faults("POST", { rules: [{ match: { aggregateId: held }, fault: "delay", delayMs: 2_000, times: 2 }] });
  try {
    globalThis.self ??= globalThis;
    setup(String(edgeRound));
    const { WowClient } = await import(`${root}/pkg/node.js`);
    const restarts = [];
    const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory", namespace: unique("trap"),
      timeoutMs: 8_000, retry: { baseMs: 50 }, onRestart: (e) => { restarts.push(e); } });
    const r = await self.scenario(client, restarts, held, other);
    if (process.env.TRAP_DEBUG) console.log(JSON.stringify(r));
    await check(r, held);
    client.free();
  } finally {
    await gateway.faults("DELETE");
  }
});

// A caller that stays at the stack's edge: each call that stops the module
// costs a restart, up to five a minute; then every call says so (it never
// hangs), and the process still ends once its work is done. The first
// version of the restart left a timer there: `hold` made it at the edge,
// where the stack ran out halfway through, and the process never ended.
test("node: a caller that stays at the edge: restarts are bounded, calls say why, the process ends", { timeout: 60_000 }, async () => {
  const { execFile } = await import("node:child_process");
  const script = `
    const { WowClient } = await import(${JSON.stringify(`${root}/pkg/node.js`)});
    const { edgeRound } = await import(${JSON.stringify(`${root}/tests/support/edge.mjs`)});
    const client = await WowClient.connect({ user: null, baseUrl: "http://127.0.0.1:9", storage: "memory", namespace: "edge" });
    const command = { aggregate: { resource: "account", id: "a" }, action: "lock_amount", body: { amount: 1 } };
    const call = () => { client.send(command).catch(() => {}); return 0; };
    for (let i = 0; i < 90; i++) { edgeRound(call, i); await null; }
    const last = await client.intents().then(() => "answered", (e) => e.message);
    console.log(JSON.stringify({ last, at: Date.now() }));`;
  const began = Date.now();
  const { stdout, code } = await new Promise((resolve) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 },
      (error, stdout) => resolve({ stdout, code: error ? error.code ?? error.signal : 0 }));
  });
  assert.equal(code, 0, "the process ended by itself");
  const { last, at } = JSON.parse(stdout.trim().split("\n").pop());
  assert.match(last, /^WowClient\.intents: the module stopped 5 times within a minute \(last: .+\); it restarts again once a minute has passed, or reload the page$/);
  assert.ok(Date.now() - at < 10_000, `ended ${Date.now() - at} ms after its last call (${Date.now() - began} ms in all)`);
});

// A client's move to a fresh instance is kept beside the instance; it must
// not keep the client, its options or its store once the app lets go of it
// (hot reload and React's StrictMode connect and free clients over and over).
test("node: a client freed, or dropped without free(), is not kept for a restart", { timeout: 60_000 }, async () => {
  const { setFlagsFromString } = await import("node:v8");
  const { runInNewContext } = await import("node:vm");
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  const { WowClient } = await import(`${root}/pkg/node.js`);
  const tick = () => new Promise((r) => setTimeout(r, 10));
  for (const mode of ["free", "drop"]) {
    let options = { user: null, baseUrl: "http://127.0.0.1:9", storage: "memory", namespace: unique("kept") };
    let client = await WowClient.connect(options);
    await client.intents();
    const refs = [new WeakRef(options), new WeakRef(client)];
    if (mode === "free") client.free();
    client = null;
    options = null;
    for (let i = 0; i < 20 && refs.some((r) => r.deref()); i++) { await tick(); gc(); }
    assert.deepEqual(refs.map((r) => r.deref() === undefined), [true, true], `${mode}: the options and the client were collected`);
  }
});
