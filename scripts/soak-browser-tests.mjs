#!/usr/bin/env node
// Runs every browser test binary N times through the project's runner
// (scripts/wasm-test-runner.mjs) in every engine, with no retry, and prints
// for each binary and engine how many runs finished with the tests' own
// result, how many passed, how many trapped, and how long the slowest run
// took. A run whose output shows a WebAssembly trap (or the engine's stack
// running out) failed, whatever its tests said: it has its own column. A run
// that did not finish or did not pass names its binary and engine, the
// failing tests or the runner's error, and keeps its whole output under
// target/soak/.
//
//   node scripts/soak-browser-tests.mjs [--runs 30] [--release] [--engines chromium,firefox,webkit]
//                                       [--binaries storage_adapter,client_gateway]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { root, startGateway } from "../tests/support/gateway.mjs";

const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf("--runs") + 1] || 30) || 30;
const release = argv.includes("--release");
const engines = argv.includes("--engines") ? argv[argv.indexOf("--engines") + 1].split(",") : ["chromium", "firefox", "webkit"];
const only = argv.includes("--binaries") ? argv[argv.indexOf("--binaries") + 1].split(",") : null;
// A trap as each engine words it, and the stack running out inside a test.
const TRAP = /RuntimeError|[Uu]nreachable (executed|code)|[Oo]ut of bounds memory access|memory access out of bounds|Maximum call stack size exceeded|too much recursion/;

execFileSync("cargo", ["build", "-q", "-p", "wow-test-gateway"], { cwd: root, stdio: "inherit" });
const gateway = await startGateway({ quiet: true });
const env = { ...process.env, WOW_GATEWAY_URL: gateway.base, WASM_BINDGEN_USE_BROWSER: "1" };
try {
  // The binaries npm test runs in Chromium, built against this gateway.
  const build = spawnSync("cargo", ["test", "--no-run", "--message-format=json", "--target", "wasm32-unknown-unknown",
    ...(release ? ["--release"] : []), "--lib", "--test", "web_storage", "--test", "storage_adapter", "--test", "client_gateway"],
  { cwd: root, env, encoding: "utf8", maxBuffer: 1 << 28, stdio: ["ignore", "pipe", "inherit"] });
  if (build.status !== 0) throw new Error("the test binaries did not build");
  const binaries = build.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((m) => m.reason === "compiler-artifact" && m.profile?.test && m.executable).map((m) => m.executable)
    .filter((b) => !only || only.some((name) => basename(b).startsWith(`${name}-`) || (name === "lib" && basename(b).startsWith("wow_command_client-"))));

  const rows = [];
  for (const engine of engines) for (const binary of binaries) {
    let finished = 0, passed = 0, trapped = 0, slowest = 0;
    const stalls = [];
    for (let i = 1; i <= runs; i++) {
      const began = Date.now();
      const run = spawnSync("node", [`${root}/scripts/wasm-test-runner.mjs`, binary],
        { cwd: root, env: { ...env, WASM_TEST_ENGINE: engine }, encoding: "utf8", maxBuffer: 1 << 26 });
      slowest = Math.max(slowest, Date.now() - began);
      const out = run.stdout + run.stderr;
      if (/test result: /.test(out)) finished++;
      const trap = out.match(TRAP);
      if (trap) trapped++;
      if (run.status === 0 && !trap) {
        passed++;
      } else {
        // Keep the whole output; say which tests failed, or what the runner said.
        const dir = join(root, "target/soak");
        mkdirSync(dir, { recursive: true });
        const file = join(dir, `${engine}-${basename(binary, ".wasm")}-run${i}.log`);
        writeFileSync(file, out);
        const failed = [...out.matchAll(/^test (\S+) \.\.\. FAIL/gm)].map((m) => m[1]);
        const said = out.split("\n").filter((l) => l.startsWith("[wasm-test-runner]") && !/: in \w+$/.test(l));
        stalls.push(`run ${i} (${((Date.now() - began) / 1000).toFixed(1)} s): ${trap ? `trapped (${trap[0]}); ` : ""}` +
          `${failed.length ? `failed ${failed.join(", ")}` : said.join(" ").slice(0, 400) || "no result"}; ${file}`);
      }
      process.stderr.write(`\r${engine} ${basename(binary)}: ${i}/${runs}`);
    }
    process.stderr.write("\n");
    rows.push({ engine, binary: basename(binary).replace(/-[0-9a-f]{16}\.wasm$/, ""), finished, passed, trapped, slowest, stalls });
  }
  console.log(`\n| engine | test binary | finished | passed | trapped | slowest run |\n|---|---|---:|---:|---:|---:|`);
  for (const r of rows) console.log(`| ${r.engine} | ${r.binary} | ${r.finished} of ${runs} | ${r.passed} of ${runs} | ${r.trapped} | ${(r.slowest / 1000).toFixed(1)} s |`);
  for (const r of rows) for (const s of r.stalls) console.log(`${r.engine} ${r.binary} ${s}`);
  process.exitCode = rows.every((r) => r.finished === runs && r.passed === runs) ? 0 : 1;
} finally {
  await gateway.stop();
}
