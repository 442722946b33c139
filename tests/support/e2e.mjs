// What every Chromium test file sets up: one test gateway serving the demo
// and the built package, one headless Chromium, and names no other test uses.
import { after, before } from "node:test";
import { launchChromium } from "./browser.mjs";
import { startGateway } from "./gateway.mjs";

/** A fresh name: `prefix-` and eight random base-36 characters. */
export const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/**
 * Starts the gateway (`options` as for `startGateway`, the demo served) and
 * Chromium before the file's tests and stops both after them; their handles
 * are the returned object's `gateway` and `browser` once started.
 */
export function gatewayAndChromium(options = {}) {
  const env = { gateway: null, browser: null };
  before(async () => {
    env.gateway = await startGateway({ www: true, ...options });
    env.browser = await launchChromium();
  });
  after(async () => { await env.browser?.close(); await env.gateway?.stop(); });
  return env;
}

/**
 * Leaves an intent mid-flight in `page`'s journal and closes the tab: a
 * lock_amount of 1 on account `id`, answered 2 s late by the gateway. The
 * record says "sending" before the request leaves the page, so the tab is
 * closed only once the gateway holds the command (it then lands, delayed):
 * history has it when the next driver asks. Closed earlier, the command
 * never arrives and a resend is the right outcome, which is another test.
 * `client` is an expression the page evaluates to its WowClient (awaited).
 * Resolves to the intent's `{ intentId, requestId }` once the gateway is idle.
 */
export async function closeTabMidFlight(gateway, page, id, client) {
  await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "delay", delayMs: 2000, times: 1 }] });
  const sent = await page.evaluate(async ([id, client]) => {
    const c = await (0, eval)(client);
    void c.send({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } }).catch(() => {});
    for (;;) {
      const [rec] = await c.intents();
      if (rec && rec.state === "sending") return { intentId: rec.intentId, requestId: rec.requestId };
      await new Promise((r) => setTimeout(r, 20));
    }
  }, [id, client]);
  for (let i = 0; (await gateway.faults("GET")).processing === 0; i++) {
    if (i >= 500) throw new Error("the command did not reach the gateway within 5 s");
    await new Promise((r) => setTimeout(r, 10));
  }
  await page.close();
  await gateway.idle();
  return sent;
}
