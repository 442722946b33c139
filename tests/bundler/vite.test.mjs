// The bundler target: a small app imports the package by name and Vite
// bundles it (the package's `exports` resolve it, the .wasm becomes an
// asset); the bundle runs in Chromium against the gateway.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { launchChromium } from "../support/browser.mjs";
import { root, startGateway } from "../support/gateway.mjs";

let gateway, browser, dist;
before(async () => {
  const app = mkdtempSync(join(tmpdir(), "wow-bundled-"));
  cpSync(new URL("./app", import.meta.url).pathname, app, { recursive: true });
  mkdirSync(join(app, "node_modules"));
  symlinkSync(join(root, "pkg"), join(app, "node_modules/wow-command-client"), "dir");
  dist = join(app, "dist");
  await build({ root: app, logLevel: "warn", build: { outDir: dist, target: "es2022" } });
  gateway = await startGateway({ www: dist });
  browser = await launchChromium();
});
after(async () => { await browser?.close(); await gateway?.stop(); });

test("Vite bundles the package by name, the .wasm as an asset, and the bundle sends a command", async () => {
  const assets = readdirSync(join(dist, "assets"));
  assert.ok(assets.some((f) => f.endsWith(".wasm")), `a .wasm asset: ${assets}`);
  const page = await browser.newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  await page.goto(`${gateway.base}/`);
  await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 20_000 });
  const result = JSON.parse(await page.evaluate(() => document.body.dataset.result));
  assert.equal(result.error, undefined, result.error);
  assert.equal(result.stage, "PROCESSED");
  assert.equal(result.effect, "ran");
  assert.equal(result.errorClass, "function");
  assert.equal(await gateway.stored("account", result.aggregateId, result.requestId), 1);
});
