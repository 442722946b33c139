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
