// The JS boundary fuzz (boundary.js) in the browsers: the web entries loaded
// from the gateway, fast-check from node_modules through an import map, the
// client over IndexedDB. Chromium runs FUZZ_RUNS (default 300); Firefox and
// WebKit a seeded share of them, FUZZ_ENGINE_RUNS (default 100), seeded by
// FUZZ_SEED like Chromium's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root, startGateway } from "../support/gateway.mjs";
import { engines, launch, ready } from "../support/engines.mjs";

let gateway;
before(async () => {
  const www = mkdtempSync(join(tmpdir(), "wow-fuzz-www-"));
  cpSync(join(root, "tests/fuzz/boundary.js"), join(www, "boundary.js"));
  cpSync(join(root, "node_modules/fast-check/lib"), join(www, "vendor/fast-check"), { recursive: true });
  cpSync(join(root, "node_modules/pure-rand/lib/esm"), join(www, "vendor/pure-rand"), { recursive: true });
  // pure-rand's subpath exports, as an import map.
  const { exports } = JSON.parse(readFileSync(join(root, "node_modules/pure-rand/package.json"), "utf8"));
  const imports = { "fast-check": "/vendor/fast-check/fast-check.js" };
  for (const [sub, target] of Object.entries(exports)) {
    if (sub.startsWith("./") && target.import) imports[`pure-rand/${sub.slice(2)}`] = target.import.replace("./lib/esm", "/vendor/pure-rand");
  }
  writeFileSync(join(www, "index.html"), `<!doctype html><meta charset="utf-8"><title>fuzz</title>
<script type="importmap">${JSON.stringify({ imports })}</script>
<script type="module">
  window.escaped = [];
  addEventListener("error", (e) => window.escaped.push(e.error ?? e.message));
  addEventListener("unhandledrejection", (e) => window.escaped.push(e.reason));
  window.runFuzz = async (runs, seed) => {
    const fc = (await import("fast-check")).default;
    const client = await import("/pkg/index.js");
    const consumer = await import("/pkg/consumer-web.js");
    const { memoryAdapter } = await import("/pkg/adapters.js");
    await client.default();
    await consumer.default();
    const { fuzzBoundary } = await import("/boundary.js");
    const lines = [];
    const report = await fuzzBoundary({
      sdk: { WowClient: client.WowClient, CommandError: client.CommandError,
             IdempotentConsumer: consumer.IdempotentConsumer, EffectError: consumer.EffectError, memoryAdapter },
      fc, base: location.origin, runs, seed, storage: "indexedDB",
      print: (line) => lines.push(line), escapes: () => window.escaped.splice(0),
    });
    return { ...report, lines };
  };
  document.body.dataset.ready = "true";
</script>`);
  gateway = await startGateway({ www, quiet: true });
});
after(async () => { await gateway?.stop(); });

for (const engine of engines) {
  const runs = engine === "chromium" ? Number(process.env.FUZZ_RUNS ?? 300) : Number(process.env.FUZZ_ENGINE_RUNS ?? 100);
  test(`every public call settles with a typed error or a value, whatever it is given (${engine}, ${runs} runs)`,
    { timeout: 20 * 60_000 }, async (t) => {
      if (!ready(t, engine)) return;
      const browser = await launch(engine);
      try {
        const page = await browser.newPage();
        await page.goto(`${gateway.base}/index.html`);
        assert.ok(await page.waitFor(() => document.body.dataset.ready === "true", null, 30_000), "the fuzz page loaded");
        const report = await page.evaluate(([runs, seed]) => window.runFuzz(runs, seed), [runs, Number(process.env.FUZZ_SEED ?? 1)]);
        for (const line of report.lines) console.log(line);
        assert.deepEqual(report.failures, []);
        assert.ok(report.tried > 0);
      } finally {
        await browser.close();
      }
    });
}
