// `connect({ user: null, persistStorage: true })` settles promptly whatever a permission
// prompt does, in Chromium, Firefox and WebKit against the gateway: Firefox
// answers `navigator.storage.persist()` only when the user answers its prompt,
// which nobody does here. The answer is reported on `client.persistence`, and
// `requestPersistentStorage()` can be stopped with a signal. The demo (which
// asks for persistence) becomes ready in every engine.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.mjs";
import { engines, launch, ready } from "../support/engines.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

/** In the page: connects with persistStorage (after `stub`, if any), sends once, and reports. */
async function connectAndSend(page, { stub }) {
  return page.evaluate(async ({ stub }) => {
    if (stub) {
      // A prompt nobody answers, in any engine: persist() never settles.
      let storage = navigator.storage;
      if (!storage) Object.defineProperty(navigator, "storage", { configurable: true, value: storage = {} });
      Object.defineProperty(storage, "persist", { configurable: true, value: () => { window.persistAsked = true; return new Promise(() => {}); } });
      Object.defineProperty(storage, "persisted", { configurable: true, value: async () => false });
    }
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    const client = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB",
      namespace: `persist-${Math.random().toString(36).slice(2)}`, persistStorage: true, timeoutMs: 10_000 });
    // Connect settled, while the prompt it asked for (stubbed: never answered) has no answer.
    const askedBeforeConnectSettled = window.persistAsked === true;
    const id = `persist-${Math.random().toString(36).slice(2, 10)}`;
    const result = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
      create: true, body: { name: id, balance: 5 } });
    const pending = Symbol("pending");
    const settle = (p, ms) => Promise.race([p, new Promise((r) => setTimeout(() => r(pending), ms))]);
    const persistence = await settle(client.persistence, 1_000);
    const request = await settle(client.requestPersistentStorage({ signal: AbortSignal.timeout(300) })
      .then((v) => ({ value: v }), (e) => ({ name: e.name, code: e.code })), 2_000);
    return { askedBeforeConnectSettled, stage: result.stage, id, requestId: result.requestId,
      persistence: persistence === pending ? "pending" : persistence, request: request === pending ? "pending" : request };
  }, { stub });
}

for (const engine of engines) {
  test(`${engine}: connect with persistStorage settles at once and sends while persist() waits; the demo becomes ready`,
    { timeout: 120_000 }, async (t) => {
      if (!ready(t, engine)) return;
      const browser = await launch(engine);
      try {
        // 1. A prompt that is never answered (persist() stubbed to never settle).
        let page = await browser.newPage();
        await page.goto(`${gateway.base}/pkg/index.js`);
        const stubbed = await connectAndSend(page, { stub: true });
        assert.ok(stubbed.askedBeforeConnectSettled, "connect asked for persistence and settled without its answer");
        assert.equal(stubbed.stage, "PROCESSED");
        assert.equal(await gateway.stored("account", stubbed.id, stubbed.requestId), 1);
        assert.equal(stubbed.persistence, "pending", "the unanswered prompt's answer is still pending");
        assert.deepEqual(stubbed.request, { name: "CommandError", code: "Aborted" }, "the signal ends the wait for the prompt");
        await page.close();

        // 2. The engine's own persist(): Firefox prompts and nobody answers.
        page = await browser.newPage();
        await page.goto(`${gateway.base}/pkg/index.js`);
        const real = await connectAndSend(page, { stub: false });
        assert.equal(real.stage, "PROCESSED");
        if (engine === "firefox") {
          assert.equal(real.persistence, "pending", "Firefox waits for its prompt");
          assert.deepEqual(real.request, { name: "CommandError", code: "Aborted" });
        } else {
          assert.ok([true, false, null].includes(real.persistence), `answered: ${real.persistence}`);
          assert.ok("value" in real.request && [true, false, null].includes(real.request.value), JSON.stringify(real.request));
        }
        await page.close();

        // 3. The demo, which connects with persistStorage: true.
        page = await browser.newPage();
        await page.goto(`${gateway.base}/?ns=persist-demo-${engine}&noresume`);
        const shown = await page.waitFor(() => document.body.dataset.ready === "true"
          && document.getElementById("persistence").textContent, null, 20_000);
        assert.ok(shown, `the demo became ready in ${engine}`);
        if (engine === "firefox") assert.match(shown, /Asked the browser/);
        await page.close();
      } finally {
        await browser.close();
      }
    });
}
