// A script that awaits a call ends when the call has settled, in Node.js,
// Deno and Bun: the pending call keeps the process alive (against a gateway
// that is down, until it rejects), and an idle client does not (after it,
// the escalated intent waits on the history probe, whose looks go on for
// as long as history is down, and the process still ends).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { root, startGateway } from "../support/gateway.mjs";

let gateway;
before(async () => { gateway = await startGateway({ quiet: true }); });
after(async () => { await gateway?.stop(); });

const script = join(root, "tests/edge/settle-process.mjs");
const runtimes = {
  node: (args) => [process.execPath, [script, ...args]],
  deno: (args) => [join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", script, ...args]],
  bun: (args) => [join(root, "node_modules/.bin/bun"), [script, ...args]],
};
const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

/** Runs the script; its exit code, its one line, and how long after that line it exited. */
function run(runtime, args, limitMs) {
  const [cmd, argv] = runtimes[runtime](args);
  const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "", errors = "", printedAt = null;
  proc.stdout.on("data", (d) => { out += d; printedAt ??= Date.now(); });
  proc.stderr.on("data", (d) => { errors += d; });
  const killer = setTimeout(() => proc.kill("SIGKILL"), limitMs);
  return new Promise((resolve, reject) => {
    proc.once("exit", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, errors, line: out.trim() ? JSON.parse(out.trim().split("\n")[0]) : null,
        afterLineMs: printedAt === null ? null : Date.now() - printedAt });
    });
    proc.once("error", reject);
  });
}

for (const runtime of Object.keys(runtimes)) {
  test(`${runtime}: a script awaiting sendAndWait against a gateway that is up resolves and ends`, { timeout: 60_000 }, async () => {
    const id = unique(runtime);
    const r = await run(runtime, [gateway.base, id], 20_000);
    assert.equal(r.signal, null, `${runtime} did not end by itself: ${r.errors}`);
    assert.equal(r.code, 0, r.errors);
    assert.equal(r.line?.resolved, "PROCESSED", JSON.stringify(r.line));
    assert.equal(await gateway.stored("account", id, r.line.requestId), 1);
    assert.ok(r.afterLineMs < 5_000, `ended ${r.afterLineMs} ms after the call settled`);
  });

  test(`${runtime}: against a gateway that is down the call rejects, and the idle client lets the process end`, { timeout: 60_000 }, async () => {
    // Nothing listens on port 9: every send and every history query fails at once.
    const r = await run(runtime, ["http://127.0.0.1:9", unique(runtime)], 30_000);
    assert.equal(r.signal, null, `${runtime} did not end by itself: ${r.errors}`);
    assert.equal(r.code, 0, `exit code ${r.code} (13: the call never settled): ${r.errors}`);
    assert.equal(r.line?.rejected, "TransportError", JSON.stringify(r.line));
    assert.equal(r.line.outcome, "escalated");
    // The history probe looks again for as long as history is down: an idle client must not hold the process.
    assert.ok(r.afterLineMs < 5_000, `ended ${r.afterLineMs} ms after the call settled`);
  });
}
