// The bundler target: a small app imports the package by name and Vite
// bundles it (the package's `exports` resolve it, the .wasm becomes an
// asset); the bundle runs in Chromium against the gateway.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { launchChromium } from "../support/browser.mjs";
import { root, startGateway } from "../support/gateway.mjs";

/** Bundles one of the apps beside this file; returns its output folder. */
async function bundle(name) {
  const app = mkdtempSync(join(tmpdir(), `wow-bundled-${name}-`));
  cpSync(new URL(`./${name}`, import.meta.url).pathname, app, { recursive: true });
  mkdirSync(join(app, "node_modules"));
  symlinkSync(join(root, "pkg"), join(app, "node_modules/wow-command-client"), "dir");
  const out = join(app, "dist");
  await build({ root: app, logLevel: "warn", build: { outDir: out, target: "es2022" } });
  return out;
}

let gateway, clientOnlyGateway, browser, dist, clientOnly;
before(async () => {
  dist = await bundle("app");
  clientOnly = await bundle("client-only");
  gateway = await startGateway({ www: dist });
  clientOnlyGateway = await startGateway({ www: clientOnly });
  browser = await launchChromium();
});
after(async () => { await browser?.close(); await gateway?.stop(); await clientOnlyGateway?.stop(); });

/** What the client-only app's page says it did: the namespace it connected, or the error. */
async function clientOnlyOutcome(page) {
  await page.goto(`${clientOnlyGateway.base}/`);
  await page.waitForFunction(() => document.body.dataset.namespace || document.body.dataset.error, null, { timeout: 20_000 });
  return page.evaluate(() => ({ ...document.body.dataset }));
}

test("an app that never calls init() is initialised by WowClient.connect", async () => {
  const page = await browser.newPage();
  try {
    assert.deepEqual(await clientOnlyOutcome(page), { namespace: "client-only" });
  } finally {
    await page.close();
  }
});

test("when connect cannot load the module, it says so and says to call init() (not a TypeError from the glue)", async () => {
  const page = await browser.newPage();
  try {
    await page.route("**/*.wasm", (route) => route.fulfill({ status: 404, body: "not here" }));
    const { error, namespace } = await clientOnlyOutcome(page);
    assert.equal(namespace, undefined);
    assert.match(error, /^WowClient\.connect: the \.wasm did not load \(.*404.*\); call `await init\(wasmUrl\)` first$/);
  } finally {
    await page.close();
  }
});

test("Vite bundles the package by name, the .wasm as an asset, and the bundle sends a command; the consumer opens without its init()", async () => {
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

test("an app that never imports the consumer bundles the client module alone", () => {
  const wasm = readdirSync(join(clientOnly, "assets")).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 1, `one .wasm asset: ${wasm}`);
  const shipped = readFileSync(join(clientOnly, "assets", wasm[0]));
  assert.ok(shipped.equals(readFileSync(join(root, "pkg/wow_command_client_bg.wasm"))), "it is the client module");
  const code = readdirSync(join(clientOnly, "assets")).filter((f) => f.endsWith(".js"))
    .map((f) => readFileSync(join(clientOnly, "assets", f), "utf8")).join("\n");
  assert.ok(!code.includes("IdempotentConsumer"), "no consumer glue in the bundle");
});

test("the app that imports both bundles both modules", () => {
  const wasm = readdirSync(join(dist, "assets")).filter((f) => f.endsWith(".wasm"));
  assert.equal(wasm.length, 2, `two .wasm assets: ${wasm}`);
});
