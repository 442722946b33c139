#!/usr/bin/env node
// Cargo's runner for wasm32 test binaries (see scripts/wasm-test-runner.sh).
//
// Node test binaries go straight to wasm-bindgen-test-runner. Browser test
// binaries are prepared by it (bindings, the test list, `run.js`), but their
// page is served by this script and driven by playwright-core in headless
// Chromium, which exits with the tests' own result. Nothing is retried.
//
// Why not its headless mode: the page stalls at "Loading scripts..." now and
// then and never recovers (the upstream reports wasm-pack #783, wasm-bindgen
// #882). The cause is its test server, not WebDriver: loaded by playwright,
// the same page from the same server stalled in 3 of 12 loads, each time with
// one of the five module requests Chromium sends at once never answered
// (request log: `inline0.js` requested, no response in 15 s). The same files
// served by Node's http server: 12 of 12, and every soak since (see
// scripts/soak-browser-tests.sh). So the runner's server is never asked for
// anything: it only writes the files, into a folder it is told to keep.
//
// Bounds (seconds, from the environment); each is an error naming the binary:
//   WASM_TEST_START_TIMEOUT  the page has started the tests      (default 60)
//   WASM_TEST_IDLE_TIMEOUT   the page printed something new      (default 180)
//   WASM_TEST_TOTAL_TIMEOUT  the whole binary                    (default 900)
// WASM_TEST_ENGINE picks the browser: chromium (default), firefox or webkit
// (tests/support/engines.mjs); the console is collected in Chromium only.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { readFile, rm } from "node:fs/promises";
import { basename, extname, join, normalize } from "node:path";
import { launchChromium } from "../tests/support/browser.mjs";
import { launch } from "../tests/support/engines.mjs";

const args = process.argv.slice(2);
const binary = basename(args.find((a) => a.endsWith(".wasm")) ?? "the test binary");
const seconds = (name, fallback) => {
  const v = Number(process.env[name]);
  return (Number.isFinite(v) && v > 0 ? v : fallback) * 1000;
};
const bounds = {
  start: seconds("WASM_TEST_START_TIMEOUT", 60),
  idle: seconds("WASM_TEST_IDLE_TIMEOUT", 180),
  total: seconds("WASM_TEST_TOTAL_TIMEOUT", 900),
};
const nocapture = args.includes("--nocapture");
// How long a page whose module trapped outside its tests may stay silent
// before it is reported stalled (its tests print a line each, most within a second).
const THROWN_GRACE_MS = 20_000;
const say = (line) => process.stderr.write(`[wasm-test-runner] ${line}\n`);

// The runner's interactive page (its index.html, not a bench), with its
// generated `run.js`: the harness writes results to #output.
const page = `<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body>
<pre id="output">Loading scripts...</pre>
<script>
  const is_bench = false;
  // The last errors and warnings the page logged, in every engine: a Rust
  // panic outside a test says what it was only there.
  window.__logged = [];
  for (const method of ["debug", "log", "info", "warn", "error"]) {
    const og = console[method];
    const on_method = "on_console_" + method;
    console[method] = function (...args) {
      if (method === "error" || method === "warn") {
        window.__logged.push(method + ": " + args.map(String).join(" ").slice(0, 2000));
        if (window.__logged.length > 10) window.__logged.shift();
      }
      if (window[on_method]) window[on_method](args);
      og.apply(this, args);
    };
  }
  window.__wbg_test_invoke = (f) => f();
  // A heartbeat, so a page that stops printing says whether its timers
  // still fire (a throttled or frozen page) or it waits on something.
  window.__beat = { count: 0, at: Date.now() };
  setInterval(() => { window.__beat = { count: window.__beat.count + 1, at: Date.now() }; }, 1000);
  // What the page threw that no test caught (a trap in a callback, a
  // rejection nobody handled): in every engine, not only where the console
  // can be read, so a page that stops after one says what it was.
  window.__thrown = [];
  const thrown = (what, e) => window.__thrown.push(what + ": " + (e && e.stack ? String(e) + " | " + e.stack.split("\\n").slice(0, 16).join(" | ") : String(e)));
  addEventListener("error", (e) => thrown("uncaught", e.error ?? e.message));
  addEventListener("unhandledrejection", (e) => thrown("unhandled rejection", e.reason));
</script>
<script src="run.js" type="module"></script>
</body></html>
`;

const types = { ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

const runner = spawn("wasm-bindgen-test-runner", args, {
  env: {
    ...process.env,
    NO_HEADLESS: "1",
    WASM_BINDGEN_TEST_ADDRESS: "127.0.0.1:0",
    WASM_BINDGEN_KEEP_TEST_BUILD: "1",
  },
  stdio: ["ignore", "pipe", "inherit"],
});
const runnerExit = new Promise((resolve) => runner.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0))));

// Until the runner says it serves a page, its output is passed through: for a
// Node test binary that is the whole run, and its exit code is the result.
let folder = null;
const served = await new Promise((resolve) => {
  let pending = "";
  const onData = (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, newline + 1);
      pending = pending.slice(newline + 1);
      const kept = /^Retaining temporary build output folder: (.+)$/.exec(line.trimEnd());
      if (kept) {
        folder = kept[1];
        continue;
      }
      if (/Interactive browsers tests are now available at/.test(line)) {
        runner.stdout.off("data", onData);
        runner.stdout.resume(); // the rest of its banner is not ours to print
        resolve(true);
        return;
      }
      process.stdout.write(line);
    }
  };
  runner.stdout.setEncoding("utf8");
  runner.stdout.on("data", onData);
  runnerExit.then(() => {
    if (pending) process.stdout.write(pending);
    resolve(false);
  });
});
if (!served) {
  if (folder) await rm(folder, { recursive: true, force: true });
  process.exit(await runnerExit);
}

let status = 1;
let browser, server;
try {
  if (!folder) throw new Error("wasm-bindgen-test-runner did not say where it wrote the test page");
  server = await serve(folder);
  status = await runPage(`http://127.0.0.1:${server.address().port}/`);
} catch (e) {
  say(`${binary}: ${String(e.message).replace(/\s*\n\s*/g, " | ")}`);
  status = 1;
} finally {
  await browser?.close().catch(() => {});
  server?.close();
  runner.kill("SIGKILL");
  if (folder) await rm(folder, { recursive: true, force: true });
}
process.exit(status);

/** The generated files (and, as the runner does, the crate's own as a fallback). */
function serve(dir) {
  const srv = createServer(async (req, res) => {
    const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp", "Cache-Control": "no-store" };
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (path === "/") {
      res.writeHead(200, { ...headers, "Content-Type": "text/html" });
      res.end(page);
      return;
    }
    for (const base of [dir, process.cwd()]) {
      for (const file of extname(path) ? [path] : [path, `${path}.js`]) {
        try {
          const body = await readFile(join(base, file));
          res.writeHead(200, { ...headers, "Content-Type": types[extname(file)] ?? "application/octet-stream" });
          res.end(body);
          return;
        } catch { /* next candidate */ }
      }
    }
    res.writeHead(404, headers);
    res.end();
  });
  return new Promise((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

async function runPage(url) {
  const engine = process.env.WASM_TEST_ENGINE || "chromium";
  say(`${binary}: in ${engine}`);
  if (engine !== "chromium") return runOtherEngine(engine, url);
  browser = await launchChromium();
  const tab = await browser.newPage();
  const consoleLines = [];
  tab.on("console", (m) => {
    const line = `${m.type()}: ${m.text()}`;
    if (nocapture) process.stdout.write(`${line}\n`);
    else consoleLines.push(line);
  });
  tab.on("pageerror", (e) => consoleLines.push(`uncaught: ${e.stack || e.message}`));
  tab.on("crash", () => consoleLines.push("the page crashed"));
  tab.on("requestfailed", (r) => consoleLines.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ""}`));

  await tab.goto(url, { waitUntil: "commit", timeout: bounds.start });
  return follow(() => tab.evaluate(pageState), consoleLines);
}

/** What the page shows: its output, and what a stall report needs. Runs in the page. */
function pageState() {
  return {
    text: document.getElementById("output")?.textContent ?? "",
    visibility: document.visibilityState,
    focused: document.hasFocus(),
    beats: window.__beat?.count ?? null,
    sinceBeatMs: window.__beat ? Date.now() - window.__beat.at : null,
    thrown: window.__thrown ?? [],
    logged: window.__logged ?? [],
  };
}

/** Firefox or WebKit, through tests/support/engines.mjs. */
async function runOtherEngine(engine, url) {
  browser = await launch(engine);
  const tab = await browser.newPage();
  await tab.goto(url);
  return follow(() => tab.evaluate(pageState), []);
}

/** Prints the page's output as it grows until its result line; the exit status. */
async function follow(output, consoleLines) {
  const began = Date.now();
  let printed = 0;
  let text = "";
  let started = false;
  let lastProgress = Date.now();
  let thrownAt = null;
  let state = {};
  for (;;) {
    state = await output();
    text = state.text;
    if (!started && !text.startsWith("Loading scripts...")) started = true;
    if (started && text.length > printed) {
      process.stdout.write(text.slice(printed));
      printed = text.length;
      lastProgress = Date.now();
    }
    if (/test result: /.test(text)) break;
    const now = Date.now();
    // A wasm trap outside every test (a RuntimeError: the module's state is
    // past trusting), then nothing printed for a while: the harness is not
    // coming back (its executor is left mid-task). Other throws are only told.
    if (thrownAt === null && state.thrown?.some((t) => /RuntimeError/.test(t))) thrownAt = now;
    const stalled =
      (!started && now - began > bounds.start && `did not start its tests within ${bounds.start / 1000} s`) ||
      (thrownAt !== null && now - Math.max(thrownAt, lastProgress) > THROWN_GRACE_MS &&
        `trapped outside its tests and printed nothing for ${THROWN_GRACE_MS / 1000} s since`) ||
      (started && now - lastProgress > bounds.idle && `printed nothing for ${bounds.idle / 1000} s`) ||
      (now - began > bounds.total && `did not finish within ${bounds.total / 1000} s`);
    if (stalled) {
      dumpConsole(consoleLines);
      const last = text.trim().split("\n").pop();
      const { visibility, focused, beats, sinceBeatMs, thrown = [], logged = [] } = state;
      throw new Error(`the page ${stalled}; its last line: ${JSON.stringify(last)}; ` +
        `page ${visibility}, ${focused ? "focused" : "not focused"}, its 1 s timer fired ${beats} times, last ${sinceBeatMs} ms ago` +
        (thrown.length ? `; it threw: ${thrown.join(" || ")}` : "; it threw nothing outside its tests") +
        (logged.length ? `; its last logged errors: ${logged.join(" || ")}` : ""));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!text.endsWith("\n")) process.stdout.write("\n");
  // A result line does not hide what was thrown beside the tests.
  for (const t of state.thrown ?? []) say(`${binary}: the page threw outside its tests: ${t}`);
  if (state.thrown?.length) for (const l of state.logged ?? []) say(`${binary}: it logged: ${l}`);
  const ok = /test result: ok\./.test(text);
  if (!ok) dumpConsole(consoleLines);
  return ok ? 0 : 1;
}

function dumpConsole(lines) {
  if (lines.length === 0) return;
  process.stdout.write("console output:\n");
  for (const line of lines) process.stdout.write(`    ${line.replace(/\n/g, "\n    ")}\n`);
}
