// How much of the caller's stack a send needs, by the nesting of its body:
// in each engine, against the test gateway, a fresh page per probe recurses
// to the stack's edge, comes back `k` frames of a small JS function, and
// sends once from there. Prints, per body depth, whether the send got
// through ("ok"), ran out of stack before the module ("RangeError" and the
// like) or inside it (then the module restarted: "(restart)"). The frames
// are the probe function's, not comparable across engines.
//
//   node bench/stack.mjs [--engines chromium,firefox,webkit] [--depths 2,64,511] [--frames 200,400,800,1600,3200,6400,12800]
import { createAccount, startGateway } from "../tests/support/gateway.mjs";
import { launch } from "../tests/support/engines.mjs";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return (i > 0 ? process.argv[i + 1] : fallback).split(",");
};
const engines = arg("engines", "chromium,firefox,webkit");
const depths = arg("depths", "2,64,511").map(Number);
const frames = arg("frames", "200,400,800,1600,3200,6400,12800").map(Number);

// Runs in the page: one send `k` frames above the stack's edge.
async function probe({ id, depth, k }) {
  const { default: init, WowClient } = await import("/pkg/index.js");
  await init();
  let restarts = 0;
  const client = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: `stack-${Math.random()}`, maxBodyDepth: 512,
    onRestart: () => { restarts++; } });
  let body = 1;
  for (let i = 0; i < depth - 2; i++) body = [body];
  const command = { aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1, deep: body } };
  let result = "not reached";
  const down = () => {
    let left;
    try { left = down(); } catch { left = 0; }
    if (left === k) { try { client.send(command); result = "ok"; } catch (e) { result = e.name; } }
    return left + 1;
  };
  down();
  await new Promise((r) => setTimeout(r, 200));
  return result + (restarts ? " (restart)" : "");
}

const gateway = await startGateway({ www: true, quiet: true });
try {
  console.log(`a send from k frames above the stack's edge, by body depth (frames: ${frames.join(", ")})`);
  for (const engine of engines) {
    const browser = await launch(engine);
    try {
      const id = await createAccount(gateway.base, "stack");
      for (const depth of depths) {
        const row = [];
        for (const k of frames) {
          const page = await browser.newPage();
          await page.goto(`${gateway.base}/pkg/index.js`);
          await page.evaluate((arg) => {
            window.result = undefined;
            (0, eval)(`(${arg.probe})`)(arg).then((r) => { window.result = r; }, (e) => { window.result = `error ${e}`; });
          }, { probe: String(probe), id, depth, k });
          row.push(`${k}: ${await page.waitFor(() => window.result, null, 30_000)}`);
          await page.close();
        }
        console.log(`${engine.padEnd(9)} depth ${String(depth).padStart(3)}  ${row.join("  ")}`);
      }
    } finally {
      await browser.close();
    }
  }
} finally {
  await gateway.stop();
}
