// The package's server-side promise in Deno and Bun (both from the npm
// registry, binaries included), through the same process script as the
// Node.js suite (tests/edge/node-process.mjs), and in Vercel's edge-runtime
// (the same client code, bundled as an edge function): a send, a stage
// stream read with for await, a lost answer confirmed by history, and a
// process killed mid-flight whose intents the next process resumes over the
// same file-backed journal, with the same requestIds, appended once.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { createAccount, root, startGateway } from "../support/gateway.mjs";

let gateway, edgeBundle;
before(async () => {
  gateway = await startGateway({ quiet: true });
  // The edge function, bundled into one script as a deployment would be.
  const out = mkdtempSync(join(tmpdir(), "wow-edge-runtime-"));
  await build({ configFile: false, logLevel: "warn", build: { outDir: out, target: "es2022", minify: false,
    lib: { entry: join(root, "tests/edge/edge-runtime-guest.mjs"), formats: ["iife"], name: "edgeFunction", fileName: () => "edge.js" } } });
  edgeBundle = join(out, "edge.js");
});
after(async () => { await gateway?.stop(); });

const script = join(root, "tests/edge/node-process.mjs");
const runtimes = {
  deno: (args) => [join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", script, ...args]],
  bun: (args) => [join(root, "node_modules/.bin/bun"), [script, ...args]],
  // Vercel's edge-runtime: the bundled edge function in its VM, hosted by Node.js.
  "edge-runtime": (args) => [process.execPath, [join(root, "tests/edge/edge-runtime-host.mjs"), edgeBundle, ...args]],
};
const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;
// The runtimes this run covers: all, or those RUNTIMES names (comma-separated;
// npm test runs each on a line of its own). Tests of other runtimes are not
// defined at all, so none is counted as skipped.
const chosen = process.env.RUNTIMES ? process.env.RUNTIMES.split(",") : Object.keys(runtimes);
for (const r of chosen) if (!runtimes[r]) throw new Error(`unknown runtime ${r}: one of ${Object.keys(runtimes)}`);

/** Starts the script in `runtime`; `result` resolves to its exit and JSON lines. */
function start(runtime, args) {
  const [cmd, argv] = runtimes[runtime](args);
  const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] });
  const lines = [];
  let buffer = "", errors = "";
  proc.stderr.on("data", (d) => { errors += d; });
  const result = new Promise((resolve, reject) => {
    proc.stdout.on("data", (d) => {
      buffer += d;
      for (let i; (i = buffer.indexOf("\n")) >= 0; buffer = buffer.slice(i + 1)) lines.push(JSON.parse(buffer.slice(0, i)));
    });
    proc.once("exit", (code, signal) => resolve({ code, signal, lines, errors }));
    proc.once("error", reject);
  });
  return { proc, result };
}

const run = async (runtime, args) => {
  const r = await start(runtime, args).result;
  assert.equal(r.code, 0, `${runtime} ${args[0]}: ${r.errors}`);
  return r.lines;
};

for (const runtime of chosen) {
  test(`${runtime}: send, a stage stream with for await, a lost answer confirmed by history`, { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), `wow-${runtime}-`));
    const id = unique(runtime);
    const lost = await createAccount(gateway.base, `${runtime}-lost`);
    await gateway.faults("POST", { rules: [{ match: { aggregateId: lost }, fault: "drop_response_after_append", times: 1 }] });
    const [probe] = await run(runtime, ["probe", dir, unique("probe"), gateway.base, JSON.stringify({ id, lost })]);
    assert.deepEqual(probe.stages, [["SENT", true], ["PROCESSED", true], ["SNAPSHOT", true]]);
    assert.equal(probe.streamed, "succeeded");
    assert.deepEqual({ ...probe.lost, requestId: undefined }, { status: "succeeded", appended: true, attempts: 1, requestId: undefined });
    await gateway.idle();
    assert.equal(await gateway.stored("account", id, probe.created), 1);
    assert.equal(await gateway.stored("account", lost, probe.lost.requestId), 1);
  });

  test(`${runtime}: a process killed mid-flight; the next one resumes the same intents with the same requestIds`, { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), `wow-${runtime}-journal-`));
    const ns = unique("restart");
    const ids = [unique(runtime), unique(runtime)];
    const commands = ids.map((id) => ({
      aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 5 } }));
    await gateway.faults("POST", { rules: ids.map((id) => ({ match: { aggregateId: id }, fault: "delay", delayMs: 1500, times: 1 })) });
    const sender = start(runtime, ["send", dir, ns, gateway.base, JSON.stringify(commands)]);
    let journaled = [];
    for (let i = 0; i < 100 && journaled.filter((r) => r.state === "sending").length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      journaled = (await run(runtime, ["intents", dir, ns, gateway.base]))[0];
    }
    assert.equal(journaled.filter((r) => r.state === "sending").length, 2);
    sender.proc.kill("SIGKILL");
    const killed = await sender.result;
    assert.equal(killed.lines.length, 0, "the sender never answered");
    const [report] = await run(runtime, ["resume", dir, ns, gateway.base]);
    const sentWith = Object.fromEntries(journaled.map((r) => [r.intentId, r.requestId]));
    assert.equal(report.driven.length, 2);
    for (const outcome of report.driven) {
      assert.equal(outcome.status, "succeeded", JSON.stringify(outcome));
      assert.equal(outcome.requestId, sentWith[outcome.intentId]);
    }
    await gateway.idle();
    for (const r of journaled) assert.equal(await gateway.stored("account", r.aggregate.aggregateId, r.requestId), 1);
  });
}

// The Deno KV adapter (adapters.js), in Deno over a local KV file.
runtimes["deno-kv"] = (args) => [join(root, "node_modules/.bin/deno"), ["run", "-A", "--quiet", "--unstable-kv", join(root, "tests/edge/deno-kv.mjs"), ...args]];

if (chosen.includes("deno")) test("Deno KV adapter: the storage contract, and a client's intent written and read back", { timeout: 60_000 }, async () => {
  const file = join(mkdtempSync(join(tmpdir(), "wow-denokv-")), "kv.sqlite");
  const [contract] = await run("deno-kv", ["contract", file]);
  assert.deepEqual(contract, {
    absent: null, firstSwap: true, staleSwap: false, nextSwap: true, read: JSON.stringify({ revision: 2 }),
    listed: ["wow-intents/ns/a", "wow-intents/ns/b"], afterDelete: ["wow-intents/ns/a"], racingWinners: 1,
  });
  const id = unique("denokv");
  const [client] = await run("deno-kv", ["client", file, gateway.base, id]);
  assert.equal(client.stage, "PROCESSED");
  assert.deepEqual(client.listed, ["succeeded"]);
  assert.equal(await gateway.stored("account", id, client.requestId), 1);
});

if (chosen.includes("deno")) test("Deno KV adapter: two processes delivering one identity at once run its effect once (compare-and-swap excludes)", { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "wow-denokv-race-"));
  const file = join(dir, "kv.sqlite"), log = join(dir, "effects.log");
  const startAt = String(Date.now() + 1_500);
  const [a, b] = await Promise.all([1, 2].map(() => run("deno-kv", ["race", file, "race", "order-7:shipped", startAt, log])));
  const statuses = [a[0].status, b[0].status].sort();
  assert.deepEqual(statuses, ["ran", "skipped"], JSON.stringify([a, b]));
  assert.equal(a[0].by, b[0].by, "both report the one effect's result");
  assert.equal(readFileSync(log, "utf8").trim().split("\n").length, 1, "the effect ran once");
});
