// `npm run bench`: the SDK against raw fetch and a JS peer, side by side in
// one run, in headless Chromium against the test gateway (release build) on
// loopback; then the core's criterion benches. Prints figures and ratios.
//
//   node bench/run.mjs [--commands 1000] [--stages 200] [--concurrency 500]
//                      [--journal 10000] [--memory 10000] [--startup 20] [--skip-core] [--out FILE]
//                      [--db-dir DIR]   (the gateway's event store under DIR, e.g. /dev/shm)
//                      [--body-sizes 1000,900000] [--body-commands 5]   (bodies)
//                      [--scoped 100]   (scope)
//                      [--escalated 100] [--idle 60]   (history)
//                      [--panel 10000] [--cpu-profile [--profile-top N]]   (devtools)
//                      [--crossings 20]   (crossings)
//                      [--long-journal 10000] [--long-rounds 5] [--long-body 900000] [--long-burst 500] [--long-resume 1000]   (longtasks)
//                      [--own 300] [--rounds 5] [--cpu-profile [--profile-top N] [--profile-out DIR]]   (own)
//                      [--pkg DIR] [--rounds 3] [--away 20] [--guarantees] [--cpu-profile [--profile-top N] [--profile-out DIR] [--profile-away MS]] [--cpu-load] [--trace]   (concurrency)
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { execFileSync, execSync } from "node:child_process";
import { chromiumPath, launchChromium } from "../tests/support/browser.mjs";
import { root, startGateway } from "../tests/support/gateway.mjs";
import { edgeRound } from "../tests/support/edge.mjs";
import { report as sizeReport, table } from "./size.mjs";
import { coreFloor, coreFloorTable, floor, floorTable, sizeReportModule } from "./floor.mjs";
import { countCalls } from "./counters.mjs";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]?.startsWith("--") ? true : all[i + 1] ?? true]] : acc, []));
const N = {
  commands: Number(args.commands ?? 1000), stages: Number(args.stages ?? 200), gap: Number(args.gap ?? 20),
  concurrency: Number(args.concurrency ?? 500), journal: Number(args.journal ?? 10_000), memory: Number(args.memory ?? 10_000),
  startup: Number(args.startup ?? 20),
};
const results = { machine: machine(), n: N };
// `--only overhead,stages`: run just those workloads.
const only = typeof args.only === "string" ? args.only.split(",") : null;
const wanted = (name) => !only || only.includes(name);

/** CPU time (ms) per process kind so far: the gateway and each kind of Chromium process. */
function processCpu() {
  const out = {};
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const kind = cmd.includes("wow-test-gateway") ? "gateway" : !cmd.includes("chrom") ? null
        : cmd.includes("NetworkService") ? "network" : (cmd.match(/--type=([a-z-]+)/)?.[1] ?? "browser");
      if (!kind || kind === "zygote") continue;
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      out[kind] = (out[kind] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
    } catch {}
  }
  return out;
}

function machine() {
  const chromiumVersion = (() => { try { return execFileSync(chromiumPath, ["--version"]).toString().trim(); } catch { return "?"; } })();
  return { cpu: `${cpus()[0]?.model ?? "?"} × ${cpus().length}`, memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version, chromium: chromiumVersion, rustc: execSync("rustc --version").toString().trim() };
}

const pct = (list, p) => {
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(2)} ms`;
/** A trace's self time (ms) per event name on the page's main thread: complete events ("X"), less their children's. */
function traceSelfTimes(events) {
  const main = events.find((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain");
  const mine = events.filter((e) => e.ph === "X" && e.dur != null && (!main || (e.pid === main.pid && e.tid === main.tid)))
    .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const self = new Map(), stack = [];
  for (const e of mine) {
    while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
    if (stack.length) stack.at(-1).child += e.dur;
    stack.push({ ts: e.ts, dur: e.dur, child: 0 });
    e.frame = stack.at(-1);
  }
  const named = (e) => (e.name === "FunctionCall" && e.args?.data
    ? `FunctionCall ${e.args.data.functionName || "(anonymous)"} ${(e.args.data.url ?? "").split("/").pop()}:${e.args.data.lineNumber ?? ""}` : e.name);
  for (const e of mine) self.set(named(e), (self.get(named(e)) ?? 0) + (e.dur - e.frame.child) / 1000);
  return self;
}

/**
 * Busy time (ms) per thread of every process in a trace, keyed
 * "process / thread": the sum of its outermost complete events (an event
 * inside another on the same thread counted once), for where a burst's
 * work lands across the renderer, the browser (its IndexedDB and lock
 * threads) and the network service.
 */
function traceThreads(events) {
  const processes = new Map(), threads = new Map();
  for (const e of events) {
    if (e.name === "process_name") processes.set(e.pid, e.args?.name ?? `${e.pid}`);
    if (e.name === "thread_name") threads.set(`${e.pid}/${e.tid}`, e.args?.name ?? `${e.tid}`);
  }
  const busy = new Map(), end = new Map();
  for (const e of events.filter((x) => x.ph === "X" && x.dur != null).sort((a, b) => a.ts - b.ts)) {
    const t = `${e.pid}/${e.tid}`;
    if ((end.get(t) ?? -1) > e.ts) continue;
    end.set(t, e.ts + e.dur);
    const key = `${processes.get(e.pid) ?? e.pid} / ${(threads.get(t) ?? e.tid).replace(/[0-9]+$/, "N")}`;
    busy.set(key, (busy.get(key) ?? 0) + e.dur / 1000);
  }
  return busy;
}

/** A CPU profile's self time (ms) per function, keyed "name file:line". */
function selfTimes(profile) {
  const dt = profile.timeDeltas, self = new Map(), byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const key = `${(f.functionName || "(anonymous)").slice(0, 90)} ${f.url.split("/").pop()}:${f.lineNumber}`;
    self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0) / 1000);
  });
  return self;
}
/**
 * The renderer main thread's top-level tasks in a trace (its outermost
 * `ThreadControllerImpl::RunTask` / `RunTask` events): the longest by thread
 * time and its wall time, how many ran over 50 ms of thread time, and their
 * thread time in all (ms).
 */
function mainTasks(events) {
  const mains = new Set(events.filter((e) => e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}/${e.tid}`));
  // A page that marks `bench-caller` (performance.mark) before work of its
  // own in the operation (a trap's deep recursion): the tasks up to the end
  // of the last such mark's task are the caller's, not counted.
  const callerMarks = events.filter((e) => e.name === "bench-caller" && mains.has(`${e.pid}/${e.tid}`)).map((e) => e.ts);
  const lastCaller = callerMarks.length ? Math.max(...callerMarks) : -Infinity;
  const every = events.filter((e) => e.ph === "X" && e.dur != null && mains.has(`${e.pid}/${e.tid}`)
    && (e.name === "ThreadControllerImpl::RunTask" || e.name === "RunTask"));
  const callersEnd = Math.max(-Infinity, ...every.filter((e) => e.ts <= lastCaller).map((e) => e.ts + e.dur));
  const tasks = every.filter((e) => e.ts >= callersEnd).sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  let end = -1, longestThread = 0, longestWall = 0, over50 = 0, mainThread = 0, longest = null;
  const counted = []; // [task, its thread ms], the outermost tasks only
  for (const e of tasks) {
    if (e.ts < end) continue;
    end = e.ts + e.dur;
    // A task's thread time, never above its wall time (a thread clock read
    // late can put more on one task than the wall clock saw).
    const thread = Math.min(e.tdur ?? e.dur, e.dur) / 1000;
    counted.push([e, thread]);
    mainThread += thread;
    if (thread > 50) over50++;
    if (thread > longestThread) { longestThread = thread; longestWall = e.dur / 1000; longest = e; }
  }
  // `--verbose`: what a task was made of (self time per event inside it), its `n` largest.
  const madeOf = (t, n, digits) => [...traceSelfTimes(events.filter((x) => x.ts >= t.ts && x.ts + (x.dur ?? 0) <= t.ts + t.dur || x.ph === "M"))]
    .sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${v.toFixed(digits)} ${k}`);
  // The longest task, and the five longest, each with what it was mostly made of,
  const inside = longest && args.verbose ? madeOf(longest, 8, 1) : undefined;
  const top = args.verbose ? [...counted].sort((a, b) => b[1] - a[1]).slice(0, 5)
    .map(([t, thread]) => `${thread.toFixed(0)} ms: ${madeOf(t, 3, 0).join(", ")}`) : undefined;
  // and the whole operation's main thread by event, self time.
  const all = args.verbose ? [...traceSelfTimes(events)].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, v]) => `${v.toFixed(1)} ${k}`) : undefined;
  return { longestThread, longestWall, over50, mainThread, inside, top, all };
}

const section = (title) => console.log(`\n## ${title}\n`);

// ---- 1. size ---------------------------------------------------------------
if (wanted("size")) {
  section("1. Size");
  // The names come from the shipped module's build (the pinned nightly, std
  // rebuilt), with its symbols kept: scripts/build.sh's flags, profile size-report.
  const named = sizeReportModule();
  const size = sizeReport(named);
  console.log(size.text);
  results.size = size.sizes;
  console.log("\nSize floor: the smallest useful client on the base crates (bench/floor/), before any SDK logic");
  results.sizeFloor = floor();
  console.log(floorTable(results.sizeFloor));
  console.log("\nThe core's floor: the client .wasm with its browser and API layers emptied (bench/floor.mjs)");
  results.coreFloor = coreFloor(named);
  console.log(coreFloorTable(results.coreFloor));
}

// ---- the page --------------------------------------------------------------
execFileSync("cargo", ["build", "-q", "--release", "-p", "wow-test-gateway"], { cwd: root, stdio: "inherit" });
const www = mkdtempSync(join(tmpdir(), "wow-bench-www-"));
cpSync(join(root, "bench/page"), www, { recursive: true });
cpSync(join(root, "node_modules/idb-keyval"), join(www, "vendor/idb-keyval"), { recursive: true });
cpSync(join(root, "node_modules/uuid"), join(www, "vendor/uuid"), { recursive: true });
cpSync(join(root, "node_modules/@microsoft/fetch-event-source"), join(www, "vendor/fetch-event-source"), { recursive: true });
// Bench 8's React app (bench/react), when that operation is asked for: the
// package's `react` entry on the page's own WowClient (/pkg/index.js).
if (wanted("longtasks") && (!args["long-ops"] || String(args["long-ops"]).split(",").includes("useIntents"))) {
  const pkgDir = typeof args.pkg === "string" ? args.pkg : join(root, "pkg");
  const { build } = await import("vite");
  await build({ root: join(root, "bench/react"), logLevel: "warn", mode: "production", configFile: false,
    // React as the repository has it, for the package's react.js wherever it was built.
    resolve: { alias: { "wow-command-client/react": join(pkgDir, "react.js"), react: join(root, "node_modules/react"),
      "react-dom": join(root, "node_modules/react-dom") } },
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
    build: { outDir: join(www, "vendor/react-bench"), emptyOutDir: true, target: "es2022", minify: true,
      lib: { entry: join(root, "bench/react/first-render.js"), formats: ["es"], fileName: () => "first-render.js" },
      rollupOptions: { external: ["wow-command-client"], output: { paths: { "wow-command-client": "/pkg/index.js" } } } } });
}
// `--db-dir /dev/shm`: the gateway's event store on tmpfs, so its fsync
// neither dominates the round trip nor competes with the browser's own writes.
// `--pkg DIR`: another build of the package (one with names, for a profile).
const gateway = await startGateway({ www, profile: "release", pkg: typeof args.pkg === "string" ? args.pkg : undefined,
  db: typeof args["db-dir"] === "string" ? join(mkdtempSync(join(args["db-dir"], "wow-bench-")), "events.sqlite") : undefined });
const browser = await launchChromium();
const page = await (await browser.newContext()).newPage();
page.on("pageerror", (e) => console.error("page error:", e.message));
page.on("console", (m) => { if (m.type() === "error") console.error("page console:", m.text()); });
const cdp = await page.context().newCDPSession(page);
await page.exposeFunction("forceGC", async () => {
  await cdp.send("HeapProfiler.collectGarbage");
  return (await cdp.send("Runtime.getHeapUsage")).usedSize;
});
/** `tab` on the bench page, once the page says it is ready (its module loaded). */
async function benchPage(tab) {
  await tab.goto(`${gateway.base}/index.html`);
  await tab.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  return tab;
}
await benchPage(page);
const run = (name, ...params) => page.evaluate(([name, params]) => window.bench[name](...params), [name, params]);
// What a measured burst left (the SDK's journal, which the peer's is not), emptied outside the measurement.
const tidy = () => run("cleanup");
// The page's own main-thread time so far, ms (Chromium's TaskDuration): read
// before and after a workload, a figure per page, unlike the renderer
// process's CPU (--cpu-load), which is one sample of everything it did.
await cdp.send("Performance.enable");
const mainThreadMs = async () => (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "TaskDuration").value * 1000;
/** `names` in the order of round `round`: rotated, so each runs first as often as the others. */
const rotated = (names, round) => [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
/** Per-function (or per-event) figures of several variants side by side, `label` first: the `top` of `sortBy`'s, each divided by `per`. */
/** The browser's trace events (Chromium's `categories`) over `work`, and what `work` returned. */
async function traced(categories, work) {
  const events = [];
  cdp.on("Tracing.dataCollected", ({ value }) => events.push(...value));
  await cdp.send("Tracing.start", { categories, transferMode: "ReportEvents" });
  const result = await work();
  const ended = new Promise((resolve) => cdp.once("Tracing.tracingComplete", resolve));
  await cdp.send("Tracing.end");
  await ended;
  cdp.removeAllListeners("Tracing.dataCollected");
  return { events, result };
}

const sideBySide = (label, maps, columns, sortBy, top, per = 1) => table(
  [...maps[sortBy]].sort((a, b) => b[1] - a[1]).slice(0, top)
    .map(([k]) => ({ k, ...Object.fromEntries(columns.map(([key]) => [key, (maps[key].get(k) ?? 0) / per])) })),
  [[label, (r) => r.k], ...columns.map(([key, name]) => [name, (r) => ms(r[key])])]);

try {
  // ---- 2. per-command overhead --------------------------------------------
  if (wanted("overhead")) {
  section(`2. Per-command overhead: ${N.commands} sequential commands at PROCESSED`);
  const o = await run("overhead", N.commands);
  const raw50 = pct(o.raw, 50), raw99 = pct(o.raw, 99);
  const rows = [
    ["raw fetch (same request, same headers)", o.raw], ["JS peer (fetch + idb-keyval + uuid)", o.peer],
    ["JS peer with the SDK's guarantees, localStorage", o.guardedLocalStorage], ["JS peer with the SDK's guarantees, IndexedDB", o.guardedIndexedDB],
    ["SDK, localStorage journal", o.sdkLocalStorage], ["SDK, IndexedDB journal", o.sdkIndexedDB],
  ].map(([name, t]) => ({ name, p50: pct(t, 50), p99: pct(t, 99) }));
  console.log(table(rows, [["variant", (r) => r.name], ["p50", (r) => ms(r.p50)], ["p99", (r) => ms(r.p99)],
    ["p50 / raw", (r) => `${(r.p50 / raw50).toFixed(2)}×`], ["p99 / raw", (r) => `${(r.p99 / raw99).toFixed(2)}×`],
    ["p50 − raw", (r) => ms(r.p50 - raw50)]]));
  console.log("targets at p50: each journal at or below the JS peer, localStorage ≤ 1.10× raw. The peer with the SDK's guarantees " +
    "(bench/page/bench.js guardedPeer) takes a Web Lock per intent, writes it before the send (IndexedDB: strict durability, " +
    "as the SDK does; idb-keyval's writes are not flushed) and after, and announces both states");
  const phaseRows = Object.entries({ raw: "raw fetch", peer: "JS peer", guardedLocalStorage: "JS peer with guarantees, localStorage",
    guardedIndexedDB: "JS peer with guarantees, IndexedDB", sdkLocalStorage: "SDK, localStorage", sdkIndexedDB: "SDK, IndexedDB" })
    .map(([k, name]) => ({ name, ...Object.fromEntries(["before", "inFlight", "after"].map((p) => [p, pct(o.phases[k][p], 50)])) }));
  console.log(`\nwhere the time goes (p50 of ${o.phases.raw.before.length} more commands each, fetch stamped at its call and its response headers)`);
  console.log(table(phaseRows, [["variant", (r) => r.name], ["before fetch", (r) => ms(r.before)],
    ["fetch → headers", (r) => ms(r.inFlight)], ["headers → caller", (r) => ms(r.after)]]));
  results.overhead = rows;
  results.overheadPhases = phaseRows;
  }

  // ---- start-up -----------------------------------------------------------
  if (wanted("startup")) {
  section(`Start-up: first import to a connected client, ${N.startup} cold page loads each`);
  const loads = { sdk: [], peer: [] };
  for (let i = 0; i < N.startup; i++) {
    for (const variant of ["sdk", "peer"]) { // interleaved, each in a fresh context: no cache, no storage
      const context = await browser.newContext();
      const tab = await context.newPage();
      await tab.goto(`${gateway.base}/startup.html?variant=${variant}`);
      loads[variant].push(await tab.waitForFunction(() => window.startup, null, { timeout: 30_000 }).then((h) => h.jsonValue()));
      await context.close();
    }
  }
  const srows = [["SDK: import + init() + connect() (IndexedDB)", loads.sdk], ["JS peer: import idb-keyval + uuid, open its store", loads.peer]]
    .map(([name, l]) => ({ name, p50: pct(l.map((x) => x.total), 50), p95: pct(l.map((x) => x.total), 95),
      import: pct(l.map((x) => x.import), 50), init: pct(l.map((x) => x.init), 50), connect: pct(l.map((x) => x.connect), 50) }));
  console.log(table(srows, [["variant", (r) => r.name], ["p50", (r) => ms(r.p50)], ["p95", (r) => ms(r.p95)],
    ["p50 / peer", (r) => `${(r.p50 / srows[1].p50).toFixed(2)}×`],
    ["import (p50)", (r) => ms(r.import)], ["init (p50)", (r) => ms(r.init)], ["connect / open (p50)", (r) => ms(r.connect)]]));
  results.startup = srows;
  }

  // ---- 3. stage latency ---------------------------------------------------
  if (wanted("stages")) {
  section(`3. Stage latency: ${N.stages} SNAPSHOT streams (3 elements each), events ${N.gap} ms apart`);
  await gateway.faults("POST", { rules: [{ match: { path: "/account/*" }, fault: "stage_gap", delayMs: N.gap, times: 1_000_000 }] });
  const st = await run("stages", N.stages, N.gap);
  const paced = (await gateway.faults("GET")).fired.filter((f) => f.fault === "stage_gap").length;
  await gateway.faults("DELETE");
  console.log(`the gateway paced ${paced} responses`);
  const lrows = ["raw", "peer", "sdk"].map((k) => ({
    name: { raw: "raw stream reader", peer: "JS peer (fetch-event-source)", sdk: "SDK sendAndWaitStream" }[k],
    p50: pct(st[k].latency, 50), p99: pct(st[k].latency, 99), max: Math.max(...st[k].latency),
    elements: st[k].elements, early: st[k].early, chunks: st[k].chunks }));
  console.log(table(lrows, [["receiver", (r) => r.name], ["elements", (r) => r.elements], ["chunks", (r) => r.chunks],
    ["p50 arrival→caller", (r) => ms(r.p50)], ["p99", (r) => ms(r.p99)], ["max", (r) => ms(r.max)],
    ["p99 extra vs raw", (r) => ms(r.p99 - lrows[0].p99)],
    ["held before the end", (r) => `${r.early} of ${r.elements}`]]));
  console.log(`target: ≤ 1 ms extra at p99. "held before the end": elements the caller had at least ${N.gap / 2} ms before the last chunk arrived (2 of every 3 when nothing waits for the end)`);
  results.stages = lrows;
  }

  // ---- 4. concurrency -----------------------------------------------------
  if (wanted("concurrency")) {
  section(`4. Concurrency: ${N.concurrency} commands in flight from one page`);
  const rounds = Number(args.rounds ?? 3);
  const median = (list) => pct(list, 50);
  // Each burst on fresh accounts, every variant once per round, the order
  // rotated: the figures are medians over the rounds, each burst's main
  // thread time read around it.
  const bursts = async (variants) => {
    const names = Object.keys(variants), measured = Object.fromEntries(names.map((k) => [k, []]));
    for (let round = 0; round < rounds; round++) {
      for (const name of rotated(names, round)) {
        const before = await mainThreadMs();
        const [burst] = (await run("concurrency", N.concurrency, { [name]: variants[name] }, 1))[name];
        measured[name].push({ ...burst, main: (await mainThreadMs()) - before });
        await tidy();
      }
    }
    return measured;
  };
  const burstRows = (c, names) => Object.entries(names).map(([key, name]) => {
    const walls = c[key].map((b) => b.ms);
    return { key, name, wall: median(walls), min: Math.min(...walls), max: Math.max(...walls),
      ok: Math.min(...c[key].map((b) => b.succeeded)), main: median(c[key].map((b) => b.main)) };
  });
  // Per command: the burst's main thread time over its commands, and the SDK's beside the peer's.
  const perCommand = (r) => r.main / N.concurrency;
  const burstTable = (rows) => table(rows, [["variant", (r) => r.name], ["succeeded (worst round)", (r) => `${r.ok} of ${N.concurrency}`],
    ["wall, median", (r) => ms(r.wall)], ["range", (r) => `${r.min.toFixed(0)}–${r.max.toFixed(0)} ms`],
    ["commands/s", (r) => (N.concurrency / (r.wall / 1000)).toFixed(0)], ["throughput vs raw", (r) => `${(rows[0].wall / r.wall).toFixed(2)}×`],
    ["main thread / command", (r) => `${perCommand(r).toFixed(2)} ms`],
    ["− peer", (r) => { const peer = rows.find((x) => x.key === "peer"); return peer ? `${(perCommand(r) - perCommand(peer)) >= 0 ? "+" : ""}${(perCommand(r) - perCommand(peer)).toFixed(2)} ms` : ""; }]]);
  // `--cpu-profile`: the page's CPU profile over one burst each of raw fetch, the guarded JS peer and the
  // SDK, by file and by function (self time; `--profile-top N` functions, default 25).
  if (args["cpu-profile"]) {
    const variants = [["raw", "raw fetch", "raw"], ["peer", "guarded peer", {}], ["sdk", "SDK", "sdk"]];
    const profiles = {};
    // `--profile-away MS`: the profiled bursts against a gateway that far away (as `--away`).
    const profileAway = Number(args["profile-away"] ?? 0);
    if (profileAway > 0) await gateway.faults("POST", { rules: [{ match: { method: "PUT", path: "*/lock_amount" }, fault: "delay", delayMs: profileAway }] });
    for (const [key, , spec] of variants) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.start");
      await run("concurrency", N.concurrency, { [key]: spec }, 1);
      const { profile } = await cdp.send("Profiler.stop");
      await tidy();
      profiles[key] = selfTimes(profile);
      // `--profile-out DIR`: each burst's whole profile, for DevTools' Performance panel or a script.
      if (args["profile-out"]) {
        mkdirSync(args["profile-out"], { recursive: true });
        writeFileSync(join(args["profile-out"], `burst-${key}.cpuprofile`), JSON.stringify(profile));
      }
    }
    if (profileAway > 0) await gateway.faults("DELETE");
    const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
    const byFile = (m) => { const f = new Map(); for (const [k, v] of m) { const file = k.split(" ").pop().split(":")[0] || "(native)"; f.set(file, (f.get(file) ?? 0) + v); } return f; };
    const files = Object.fromEntries(variants.map(([key]) => [key, byFile(profiles[key])]));
    const columns = variants.map(([key, name]) => [key, name]);
    const top = Number(args["profile-top"] ?? 25);
    console.log(sideBySide("self time in", files, columns, "sdk", Infinity));
    console.log(`CPU profile of one burst each (${variants.map(([key, name]) => `${name} ${ms(sum(profiles[key]))}`).join(", ")} sampled), by self time:`);
    console.log(sideBySide("function", profiles, columns, "sdk", top));
  }
  // `--trace`: the browser's trace over one burst each of raw fetch, the guarded peer and the SDK: busy time per
  // process and thread (where the burst's work lands: the renderer, the browser's IndexedDB and lock threads, the
  // network service), and the renderer's main thread by event (self time).
  if (args.trace) {
    const variants = [["raw", "raw fetch", "raw"], ["peer", "guarded peer", {}], ["sdk", "SDK", "sdk"]];
    const threads = {}, main = {};
    for (const [key, , spec] of variants) {
      const { events, result: [burst] } = await traced("devtools.timeline,v8,blink,IndexedDB,toplevel,disabled-by-default-devtools.timeline",
        async () => (await run("concurrency", N.concurrency, { [key]: spec }, 1))[key]);
      await tidy();
      threads[key] = traceThreads(events);
      threads[key].set("(the burst's wall time)", burst.ms);
      main[key] = traceSelfTimes(events);
    }
    const columns = variants.map(([key, name]) => [key, name]);
    console.log(`trace of one burst of ${N.concurrency} each: busy time per process and thread`);
    console.log(sideBySide("process / thread", threads, columns, "sdk", Number(args["profile-top"] ?? 25)));
    console.log("the renderer's main thread by event (self time):");
    console.log(sideBySide("event", main, columns, "sdk", Number(args["profile-top"] ?? 25)));
  }
  // `--cpu-load`: CPU time per process (Linux /proc) over one raw burst, one guarded peer burst and one SDK burst.
  if (args["cpu-load"]) {
    const rows = [];
    for (const [variant, spec] of [["raw", "raw"], ["JS peer with the guarantees", {}], ["sdk", "sdk"]]) {
      const before = processCpu();
      const [burst] = (await run("concurrency", N.concurrency, { [variant]: spec }, 1))[variant];
      const after = processCpu();
      await tidy();
      rows.push({ variant, wall: burst.ms, ...Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)])) });
    }
    const kinds = Object.keys(rows[1]).filter((k) => !["variant", "wall"].includes(k));
    console.log("CPU time per process over one burst (includes creating its 10 accounts):");
    console.log(table(rows, [["variant", (r) => r.variant], ["wall", (r) => ms(r.wall)],
      ...kinds.map((k) => [k, (r) => `${(r[k] ?? 0).toFixed(0)} ms`])]));
  }
  // SDK − peer per command, paired by round (both bursts of a round run
  // back to back): a drift of the machine over the run cancels out.
  const paired = (c) => {
    const d = c.sdk.map((b, i) => (b.main - c.peer[i].main) / N.concurrency).sort((a, b) => a - b);
    const signed = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(2)} ms`;
    return `SDK − peer per command, paired by round: median ${signed(pct(d, 50))} (${d.map(signed).join(", ")})`;
  };
  const c = await bursts({ raw: "raw", peer: {}, sdk: "sdk" });
  const rows = burstRows(c, { raw: "raw fetch", peer: "JS peer with the SDK's guarantees", sdk: "SDK (IndexedDB)" });
  console.log(burstTable(rows));
  console.log(paired(c));
  console.log(`${rounds} rounds. The JS peer (bench/page/bench.js guardedPeer): a Web Lock per intent, the intent written ` +
    "with strict durability before its send and group-committed, its outcome written after, both states announced");
  results.concurrency = c;
  // The same bursts against a gateway `--away` ms away (default 20): a delay
  // rule holds every command that long before processing it, as a network
  // round trip would, without using the machine's CPU. On loopback the
  // gateway shares the two cores with the browser, so every millisecond of
  // client work slows the server too; across a network it does not.
  const away = Number(args.away ?? 20);
  if (away > 0) {
    await gateway.faults("POST", { rules: [{ match: { method: "PUT", path: "*/lock_amount" }, fault: "delay", delayMs: away }] });
    const far = await bursts({ raw: "raw", peer: {}, sdk: "sdk" });
    await gateway.faults("DELETE");
    console.log(`\nthe same, each command held ${away} ms by the gateway (a gateway across a network):`);
    console.log(burstTable(burstRows(far, { raw: "raw fetch", peer: "JS peer with the SDK's guarantees", sdk: "SDK (IndexedDB)" })));
    console.log(paired(far));
    results.concurrencyAway = { away, bursts: far };
  }
  // `--guarantees`: what each of the peer's guarantees costs a burst, each left out in turn.
  if (args.guarantees) {
    const g = await bursts({ raw: "raw", all: {}, lock: { lock: false }, announce: { announce: false },
      strict: { first: "relaxed" }, outcome: { after: false }, none: { lock: false, announce: false, first: "relaxed", after: false } });
    console.log(burstTable(burstRows(g, { raw: "raw fetch", all: "JS peer, every guarantee", lock: "… without the Web Lock",
      announce: "… without the announcements", strict: "… the first write relaxed, not strict", outcome: "… without the outcome write",
      none: "… none of these (one relaxed write before the send)" })));
    results.guarantees = g;
  }
  // The same burst from two pages sharing one journal (half each), against
  // the raw figure above: every page's drives go through one IndexedDB
  // database, its Web Locks and its announcements.
  const second = await page.context().newPage();
  await benchPage(second);
  const half = Math.floor(N.concurrency / 2), walls = [];
  let worst = 2 * half;
  for (let round = 0; round < rounds; round++) {
    const shared = `bench-shared-${Date.now()}`;
    const { ids } = await page.evaluate(([ns]) => window.bench.sharedBurst(0, ns, null, 0), [shared]);
    const startAt = Date.now() + 1_000;
    const halves = await Promise.all([page, second].map((p) =>
      p.evaluate(([n, ns, ids, at]) => window.bench.sharedBurst(n, ns, ids, at), [half, shared, ids, startAt])));
    walls.push(Math.max(...halves.map((h) => h.endedAt)) - Math.min(...halves.map((h) => h.startedAt)));
    worst = Math.min(worst, halves.reduce((a, h) => a + h.succeeded, 0));
  }
  await second.close();
  const wall = median(walls);
  console.log(`two pages sharing one journal, ${half} each: ${worst} of ${2 * half} succeeded (worst round), wall ${ms(wall)} ` +
    `(median of ${rounds}, ${Math.min(...walls)}–${Math.max(...walls)} ms), ${(2 * half / (wall / 1000)).toFixed(0)} commands/s, ` +
    `${((rows[0].wall * (2 * half) / N.concurrency) / wall).toFixed(2)}× raw fetch's throughput`);
  results.concurrencyTwoPages = { n: 2 * half, succeeded: worst, walls };
  }

  // ---- 4c. body size -------------------------------------------------------
  // What a body's size costs the main thread: commands one after another
  // with a small and a large body, raw fetch, the guarded peer and the SDK
  // (IndexedDB), interleaved in rounds; main-thread time (Chromium's
  // TaskDuration) around the sends alone, per command, median of the rounds.
  if (wanted("bodies")) {
  const sizes = (typeof args["body-sizes"] === "string" ? args["body-sizes"] : "1000,900000").split(",").map(Number);
  const rounds = Number(args.rounds ?? 3), perRound = Number(args["body-commands"] ?? 5);
  section(`4c. Body size: ${rounds} rounds of ${perRound} commands one after another per variant and body`);
  const names = { raw: "raw fetch", peer: "JS peer with the SDK's guarantees", sdk: "SDK (IndexedDB)" };
  const columns = Object.entries(names), top = Number(args["profile-top"] ?? 25);
  const rows = [];
  for (const size of sizes) {
    const bytes = await run("bodySetup", size);
    const main = Object.fromEntries(Object.keys(names).map((k) => [k, []]));
    for (const k of Object.keys(names)) await run("bodyRun", k, 1); // warm
    for (let round = 0; round < rounds; round++) {
      for (const k of rotated(Object.keys(names), round)) {
        const before = await mainThreadMs();
        await run("bodyRun", k, perRound);
        main[k].push(((await mainThreadMs()) - before) / perRound);
      }
    }
    // `--trace`: the browser's own events over one run of each variant, by
    // name (self time: an event's duration less its children's), for what a
    // CPU profile shows only as "(program)".
    if (args.trace) {
      const byVariant = {};
      for (const k of Object.keys(names)) {
        const { events } = await traced("devtools.timeline,v8,blink,disabled-by-default-devtools.timeline",
          () => run("bodyRun", k, perRound));
        byVariant[k] = traceSelfTimes(events);
      }
      console.log(`trace events of ${perRound} commands with a ${bytes} B body, self time per command:`);
      console.log(sideBySide("event", byVariant, columns, "sdk", top, perRound));
    }
    // `--cpu-profile`: where the SDK's time goes for this body, by self time.
    if (args["cpu-profile"]) {
      const profiles = {};
      for (const k of Object.keys(names)) {
        await cdp.send("Profiler.enable");
        if (args["sample-us"]) await cdp.send("Profiler.setSamplingInterval", { interval: Number(args["sample-us"]) });
        await cdp.send("Profiler.start");
        await run("bodyRun", k, perRound);
        profiles[k] = selfTimes((await cdp.send("Profiler.stop")).profile);
      }
      console.log(`CPU profile of ${perRound} commands with a ${bytes} B body, by self time per command:`);
      console.log(sideBySide("function", profiles, columns, "sdk", top, perRound));
    }
    await run("bodyTeardown");
    for (const k of Object.keys(names)) rows.push({ bytes, name: names[k], key: k, main: pct(main[k], 50), min: Math.min(...main[k]), max: Math.max(...main[k]) });
  }
  const rawOf = (r) => rows.find((x) => x.bytes === r.bytes && x.key === "raw").main;
  console.log(table(rows, [["body", (r) => `${(r.bytes / 1000).toFixed(r.bytes < 10_000 ? 1 : 0)} KB`], ["variant", (r) => r.name],
    ["main thread / command", (r) => ms(r.main)], ["range", (r) => `${r.min.toFixed(1)}–${r.max.toFixed(1)} ms`],
    ["/ raw fetch", (r) => `${(r.main / rawOf(r)).toFixed(2)}×`]]));
  console.log("target: a 900 KB body at most 2× raw fetch's main thread (the body serialised once, hashed once, cloned into storage once)");
  results.bodies = rows;
  }

  // ---- 4d. one scope ---------------------------------------------------------
  // `--scoped 100`: intents fired at once into one scope are sent one after
  // another in the order written; what that costs against the same commands
  // sent one after another by hand (raw fetch awaiting each).
  if (wanted("scope")) {
  const n = Number(args.scoped ?? 100), rounds = Number(args.rounds ?? 3);
  section(`4d. One scope: ${n} intents fired at once, sent in the order written (${rounds} rounds)`);
  const runs = [];
  for (let round = 0; round < rounds; round++) runs.push(await run("scoped", n));
  const med = (k) => pct(runs.map((r) => r[k]), 50);
  const rows = [["raw fetch, awaiting each", med("raw")], ["SDK, the caller awaiting each", med("awaited")],
    ["SDK, one scope, fired at once", med("scoped")]].map(([name, wall]) => ({ name, wall }));
  console.log(table(rows, [["variant", (r) => r.name], ["wall (median)", (r) => ms(r.wall)],
    ["per intent", (r) => ms(r.wall / n)], ["/ raw fetch", (r) => `${(r.wall / rows[0].wall).toFixed(2)}×`]]));
  console.log(`succeeded ${runs.map((r) => r.succeeded).join(", ")} of ${n}; first attempts in the order written: ${runs.every((r) => r.inOrder)}`);
  results.scope = { n, runs };
  }

  /** What reached the gateway (its arrivals log; `query`: `contains=…`, `requestId=…`, `since=…`). */
  const arrivals = async (query) => (await fetch(`${gateway.base}/__gateway/arrivals?${query}`)).json();
  const isEventQuery = (a) => /\/event\/(count|list)$/.test(a.path);

  // ---- 4e. history down -----------------------------------------------------
  // `--escalated 100 --idle 60`: N creates whose answers are lost while the
  // event history is down (every query fails), so all escalate; an idle
  // window with history still down; then history is back. The gateway's
  // record of what arrived counts the event queries naming these accounts;
  // Chromium's TaskDuration the page's main thread in the idle window.
  if (wanted("history")) {
  const n = Number(args.escalated ?? 100), idleS = Number(args.idle ?? 60);
  section(`4e. History down: ${n} lost answers escalate, ${idleS} s idle, then history is back`);
  const prefix = `hist-${Math.random().toString(36).slice(2, 8)}`;
  const queries = async (since) => {
    const r = await arrivals(`contains=${prefix}&since=${since}`);
    return { n: r.arrivals.filter(isEventQuery).length, next: r.next };
  };
  const states = () => page.evaluate(async () => (await window.historyClient.intents()).map((r) => r.state));
  await page.evaluate(async (ns) => {
    const { WowClient } = await import("/pkg/index.js");
    window.historyClient = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: ns, timeoutMs: 4_000 });
  }, prefix);
  const { next: start } = await queries(0);
  await gateway.faults("POST", { rules: [{ match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable" },
    { match: { method: "POST", path: "/account/create_account" }, fault: "drop_response_after_append" }] });
  const began = Date.now();
  const statuses = await page.evaluate(async ([prefix, n]) => (await Promise.all(Array.from({ length: n }, (_, i) =>
    window.historyClient.send({ aggregate: { resource: "account", id: `${prefix}-${i}` }, action: "create_account", create: true,
      body: { name: `${prefix}-${i}`, balance: 1 } })))).map((o) => o.status), [prefix, n]);
  const escalating = { ...(await queries(start)), ms: Date.now() - began, escalated: statuses.filter((x) => x === "escalated").length };
  const before = await mainThreadMs();
  await new Promise((r) => setTimeout(r, idleS * 1000));
  const idle = { ...(await queries(escalating.next)), main: (await mainThreadMs()) - before };
  await gateway.faults("DELETE");
  const backAt = Date.now();
  let done = false;
  while (!done && Date.now() - backAt < 300_000) {
    const s = await states();
    done = s.length === n && s.every((x) => x === "succeeded");
    if (!done) await new Promise((r) => setTimeout(r, 250));
  }
  const back = { ...(await queries(idle.next)), ms: Date.now() - backAt };
  let once = 0;
  for (const r of await page.evaluate(async () => (await window.historyClient.intents()).map((r) => [r.aggregate.aggregateId, r.requestId]))) {
    if ((await gateway.stored("account", r[0], r[1])) === 1) once++;
  }
  await page.evaluate(async () => { await window.historyClient.clear(); window.historyClient.free(); });
  const rows = [
    [`queries to escalate the ${n}`, escalating.n, `${escalating.escalated} escalated in ${ms(escalating.ms)}`],
    [`queries in the ${idleS} s idle, history still down`, idle.n, `main thread ${ms(idle.main)}`],
    ["queries when history is back", back.n, done ? `all ${n} succeeded after ${ms(back.ms)}` : `not all succeeded in ${ms(back.ms)}`],
    ["streams in history", `${once} of ${n} once`, ""],
  ];
  console.log(table(rows.map(([what, value, note]) => ({ what, value, note })),
    [["", (r) => r.what], ["figure", (r) => String(r.value)], ["", (r) => r.note]]));
  console.log("targets: escalating ≤ 50 queries; idle minute ≤ 20 queries and ≤ 300 ms of main thread; back: all within 40 s, ≤ 10 queries, one stream each");
  results.history = { n, idleS, escalating, idle, back, once };
  }

  // ---- 4f. one lost answer ---------------------------------------------------
  // `--lost 20`: creates one after another, each answered (clean) or with its
  // answer lost after the append (the gateway drops it once), so the SDK
  // confirms it against history; history is up. Wall time from send() to its
  // outcome, and the event queries each lost answer cost: what the history
  // gate must not slow (run against `--pkg` of an earlier build to compare).
  if (wanted("lost")) {
  const n = Number(args.lost ?? 20);
  section(`4f. One lost answer: ${n} creates one after another, each clean or its answer lost after the append`);
  const prefix = `lost-${Math.random().toString(36).slice(2, 8)}`;
  await page.evaluate(async (ns) => {
    const { WowClient } = await import("/pkg/index.js");
    window.lostClient = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: ns, timeoutMs: 10_000 });
  }, prefix);
  const create = (id) => page.evaluate(async (id) => {
    const t0 = performance.now();
    const o = await window.lostClient.send({ aggregate: { resource: "account", id }, action: "create_account", create: true,
      body: { name: id, balance: 1 } });
    return { ms: performance.now() - t0, status: o.status, attempts: o.attempts, requestId: o.requestId };
  }, id);
  const rows = { clean: [], lost: [] };
  let queries = 0, wrong = 0, attempts = 0, arrived = 0, once = 0;
  for (let i = 0; i < n; i++) {
    for (const kind of rotated(["clean", "lost"], i)) {
      const id = `${prefix}-${kind}-${i}`;
      if (kind === "lost") await gateway.faults("POST", { rules: [{ match: { aggregateId: id }, fault: "drop_response_after_append", times: 1 }] });
      const r = await create(id);
      if (r.status !== "succeeded") wrong++;
      rows[kind].push(r.ms);
      if (kind === "lost") {
        await gateway.faults("DELETE");
        queries += (await arrivals(`contains=${id}&since=0`)).arrivals.filter(isEventQuery).length;
        arrived += (await arrivals(`requestId=${r.requestId}&since=0`)).arrivals.filter((x) => x.path.endsWith("/create_account")).length;
        attempts += r.attempts;
        if ((await gateway.stored("account", id, r.requestId)) === 1) once++;
      }
    }
  }
  await page.evaluate(async () => { await window.lostClient.clear(); window.lostClient.free(); });
  const stats = (k) => ({ name: k === "clean" ? "answered" : "answer lost, confirmed", p50: pct(rows[k], 50), p90: pct(rows[k], 90) });
  const out = [stats("clean"), stats("lost")];
  console.log(table(out, [["create", (r) => r.name], ["p50", (r) => ms(r.p50)], ["p90", (r) => ms(r.p90)],
    ["/ answered (p50)", (r) => `${(r.p50 / out[0].p50).toFixed(2)}×`]]));
  console.log(`per lost answer: ${(queries / n).toFixed(2)} event queries, ${(attempts / n).toFixed(2)} attempts by the SDK, ` +
    `${(arrived / n).toFixed(2)} creates arrived; ${once} of ${n} in history once; outcomes other than succeeded: ${wrong}`);
  console.log("(a browser may resend a POST itself when a reused connection closes unanswered: the gateway refuses the copy " +
    "DuplicateRequestId, a 400 in the page's console, and the SDK asks history)");
  results.lost = { n, rows, queries, wrong, attempts, arrived, once };
  }

  // ---- 5. journal scale ---------------------------------------------------
  // ---- 4g. crossings ------------------------------------------------------
  // The calls the module makes into JS per command (issue 52's one crossing
  // per value): counted, not timed, in a page of its own whose
  // WebAssembly.instantiate wraps every import of the module with a counter.
  // Beside them, the calls into the browser a command costs (timers, abort
  // controllers, locks, IndexedDB, channels, text decoding), counted the same
  // way: each is work of the main thread, and a count shows a change exactly.
  if (wanted("crossings")) {
    section("4g. Crossings: the module's calls into JS per sendAndWait, one after another");
    const counted = await (await browser.newContext()).newPage();
    await counted.addInitScript(countCalls);
    await benchPage(counted);
    const n = Number(args.crossings ?? 20), top = Number(args["profile-top"] ?? 8);
    const rows = [];
    for (const storage of ["indexedDB", "localStorage", "memory"]) {
      const { per, platform } = await counted.evaluate(([n, storage]) => window.bench.crossings(n, storage), [n, storage]);
      const sorted = Object.entries(per).sort((a, b) => b[1] - a[1]);
      rows.push({ storage, total: sorted.reduce((a, [, v]) => a + v, 0),
        largest: sorted.slice(0, top).map(([k, v]) => `${k.replace(/^__wbg_|_[0-9a-f]{16}$/g, "")} ${v}`).join(", "),
        platform: Object.entries(platform).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ") });
    }
    await counted.close();
    console.log(table(rows, [["journal", (r) => r.storage], ["calls into JS / command", (r) => r.total.toFixed(1)],
      ["the most called (names as the package's glue has them)", (r) => r.largest]]));
    console.log("\ncalls into the browser per command");
    console.log(table(rows, [["journal", (r) => r.storage], ["calls (the page's, all of them the SDK's)", (r) => r.platform]]));
    results.crossings = rows;
  }

  // ---- 4h. one command's own work -----------------------------------------
  // The per-command targets of issue 52 without the gateway and the network,
  // whose share of every other figure moves from run to run on a shared
  // machine: the SDK and the guarded peer send one after another to a fetch
  // that answers at once, in turns, `--rounds` rounds (default 5); each
  // round's figure is its wall time and its main thread per command.
  if (wanted("own")) {
    section("4h. One command's own work: sendAndWait one after another, fetch answered at once");
    const n = Number(args.own ?? 300), rounds = Number(args.rounds ?? 5);
    const rows = [];
    for (const storage of ["localStorage", "indexedDB"]) {
      await page.evaluate((storage) => window.bench.ownWorkSetup(storage), storage);
      const runs = { sdk: [], peer: [] };
      for (let round = 0; round < rounds; round++) {
        for (const variant of rotated(["sdk", "peer"], round)) {
          const before = await mainThreadMs();
          const wall = await page.evaluate(([v, n]) => window.bench.ownWorkRun(v, n), [variant, n]);
          runs[variant].push({ wall: wall / n, main: ((await mainThreadMs()) - before) / n });
        }
      }
      // `--cpu-profile`: one more run of each, profiled, by function (self time).
      if (args["cpu-profile"]) {
        const profiles = {};
        for (const variant of ["peer", "sdk"]) {
          await cdp.send("Profiler.enable");
          await cdp.send("Profiler.start");
          await page.evaluate(([v, n]) => window.bench.ownWorkRun(v, n), [variant, n]);
          const { profile } = await cdp.send("Profiler.stop");
          profiles[variant] = selfTimes(profile);
          if (args["profile-out"]) {
            mkdirSync(args["profile-out"], { recursive: true });
            writeFileSync(join(args["profile-out"], `own-${storage}-${variant}.cpuprofile`), JSON.stringify(profile));
          }
        }
        console.log(`${storage}: CPU profile of ${n} commands each, by self time`);
        console.log(sideBySide("function", profiles, [["peer", "guarded peer"], ["sdk", "SDK"]], "sdk", Number(args["profile-top"] ?? 25)));
      }
      await page.evaluate(() => window.bench.ownWorkTeardown());
      const median = (list) => pct(list, 50);
      const diff = (key) => runs.sdk.map((r, i) => r[key] - runs.peer[i][key]);
      const spread = (list) => `${median(list) >= 0 ? "+" : ""}${median(list).toFixed(3)} ms (${Math.min(...list).toFixed(3)} to ${Math.max(...list).toFixed(3)})`;
      rows.push({ storage, sdk: median(runs.sdk.map((r) => r.main)), peer: median(runs.peer.map((r) => r.main)),
        sdkWall: median(runs.sdk.map((r) => r.wall)), peerWall: median(runs.peer.map((r) => r.wall)),
        main: spread(diff("main")), wall: spread(diff("wall")) });
    }
    console.log(table(rows, [["journal", (r) => r.storage],
      ["main thread / command, SDK", (r) => `${r.sdk.toFixed(3)} ms`], ["peer", (r) => `${r.peer.toFixed(3)} ms`],
      ["SDK − peer, paired by round: median (range)", (r) => r.main],
      ["wall / command, SDK", (r) => `${r.sdkWall.toFixed(3)} ms`], ["peer", (r) => `${r.peerWall.toFixed(3)} ms`],
      ["SDK − peer (wall)", (r) => r.wall]]));
    console.log(`${rounds} rounds of ${n} commands each, in turns. Target (issue 52): SDK − peer ≤ +0.3 ms`);
    results.ownWork = rows;
  }

  if (wanted("journal")) {
  section(`5. Journal scale: ${N.journal} persisted intents (IndexedDB)`);
  const j = await run("journalScale", N.journal);
  console.log(table([j], [["intents", (r) => r.n], ["scan (resume's read)", (r) => ms(r.scanMs)],
    ["prune", (r) => `${ms(r.pruneMs)} (${r.pruned} removed, ${r.left} kept)`],
    ["JSON bytes / intent", (r) => r.jsonBytesPerIntent.toFixed(0)], ["stored bytes / intent", (r) => r.storedBytesPerIntent.toFixed(0)]]));
  console.log("target: the scan under 1 s");
  results.journal = j;
  }

  // ---- 5c. the devtools panel ---------------------------------------------
  // `--panel 10000`: the panel opened on a journal of that many intents, then
  // 20 changes (sends) while it is open: its first rows, and each change's
  // panel work (a windowed list: filter and draw the visible rows).
  if (wanted("devtools")) {
  const n = Number(args.panel ?? 10_000);
  section(`5c. The devtools panel: opened on ${n} intents, then 20 changes`);
  if (args["cpu-profile"]) { await cdp.send("Profiler.enable"); await cdp.send("Profiler.start"); }
  const d = await run("devtoolsPanel", n, 20);
  if (args["cpu-profile"]) {
    const self = selfTimes((await cdp.send("Profiler.stop")).profile);
    const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(args["profile-top"] ?? 25));
    console.log(`CPU profile of opening it and the changes, by self time:\n${top.map(([k, v]) => `${ms(v).padStart(12)}  ${k}`).join("\n")}`);
  }
  console.log(table([
    { what: "first rows drawn after mounting it open", value: ms(d.firstRows), target: "≤ 1 s" },
    { what: "a change: its panel work, median (max)", value: `${ms(pct(d.costs, 50))} (${ms(Math.max(...d.costs))})`, target: "≤ 16 ms" },
    { what: "rows in the DOM (windowed)", value: `${d.rowsDrawn} of ${d.shown}`, target: "" },
  ], [["", (r) => r.what], ["figure", (r) => r.value], ["target", (r) => r.target]]));
  results.devtools = d;
  }

  // ---- 5b. footprint per intent -------------------------------------------
  if (wanted("footprint")) {
  section("5b. Journal footprint per intent (the records the SDK writes, as JSON text)");
  const f = await run("footprint", 50);
  console.log(table(f, [["intents", (r) => `${r.label} (${Object.entries(r.states).map(([k, v]) => `${v} ${k}`).join(", ")})`],
    ["before the send (unresolved)", (r) => `${r.beforeSendChars.toFixed(0)} B`], ["settled / final", (r) => `${r.settledChars.toFixed(0)} B`],
    ["key", (r) => `${r.keyChars.toFixed(0)} B`]]));
  console.log("localStorage counts UTF-16: twice these bytes against its quota; IndexedDB stores the same object structured-cloned");
  results.footprint = f;
  }

  // ---- 8. long tasks --------------------------------------------------------
  // What a user feels: a main-thread task over 50 ms (RAIL, the Long Tasks
  // API) delays the next input. Each operation runs alone in the page, traced;
  // every top-level task of the renderer's main thread inside it is counted,
  // by its thread time (what the page's thread spent, not the preemption this
  // two-core machine adds) with the wall time beside it. `--long-rounds`
  // rounds (default 5), the operations in turn in each round, each round on a
  // journal seeded afresh outside the trace: median (range) of each figure.
  if (wanted("longtasks")) {
    const n = Number(args["long-journal"] ?? 10_000), rounds = Number(args["long-rounds"] ?? 5);
    const bodyBytes = Number(args["long-body"] ?? 900_000), burstN = Number(args["long-burst"] ?? 500);
    const resumeN = Number(args["long-resume"] ?? 1000), restartN = Number(args["long-restart"] ?? 1000);
    const localN = Number(args["long-local"] ?? n);
    section(`8. Long tasks: ${rounds} rounds, a journal of ${n} IndexedDB intents, a ${Math.round(bodyBytes / 1000)} KB body, a burst of ${burstN}`);
    const ops = [
      ["connect", `connect on ${n} intents`], ["intents", "intents()"], ["quarantined", "quarantined()"],
      ["panel", "the devtools panel's first rows"], ["useIntents", "useIntents' first render (React; the first 50 rows drawn)"],
      ["prune", "prune()"],
      ["body", `sendAndWait, ${Math.round(bodyBytes / 1000)} KB body`], ["bodyRaw", "  raw fetch + JSON.stringify, same body"],
      ["burst", `a burst of ${burstN} send()`], ["resume", `connect and resume() on ${resumeN} unresolved intents`],
      ["restart", `a restart after a trap, ${restartN} intents (after the trapping call)`], ["connectLocal", "connect on localStorage, as many as fit"],
    ].filter(([op]) => !args["long-ops"] || String(args["long-ops"]).split(",").includes(op)); // `--long-ops body,bodyRaw`
    const figures = Object.fromEntries(ops.map(([op]) => [op, []]));
    for (let round = 0; round < rounds; round++) {
      // Each round in a fresh page: nothing of an earlier round's (its module, its heap) left in it
      // (`--long-same-page`: one page for all, to look into what an earlier round leaves).
      if (!args["long-same-page"] || round === 0) await benchPage(page);
      const namespace = await run("longSeed", n);
      const unresolved = await run("longSeed", resumeN, 1);
      await run("longRun", "bodyPrep", namespace, bodyBytes); // the caller's body, made outside the trace
      // The caller's deep recursion (tests/support/edge.mjs), for the trap.
      await page.evaluate((source) => { window.edgeRound = (0, eval)(`(${source})`); }, String(edgeRound));
      for (const [op] of ops) {
        const arg = op === "burst" ? burstN : bodyBytes;
        // Made outside the trace: the restart's journal and client, localStorage's journal.
        let on = op === "resume" ? unresolved : namespace;
        if (op === "restart") await run("longRun", "restartPrep", (on = await run("longSeed", restartN)), 0);
        if (op === "connectLocal") [on, figures.localStored] = await run("longSeedLocal", localN);
        const { events, result: wall } = await traced(`toplevel,blink.user_timing,disabled-by-default-devtools.timeline${args.verbose ? ",devtools.timeline,v8,blink,IndexedDB" : ""}`,
          () => run("longRun", op, on, arg));
        figures[op].push({ wall, ...mainTasks(events) });
        if (args.verbose) console.log(round, op, JSON.stringify(figures[op].at(-1)));
      }
      await run("longRun", "close", namespace);
    }
    // `--long-profile intents,connect`: one more round, those operations profiled, by self time.
    if (typeof args["long-profile"] === "string") {
      await benchPage(page);
      const namespace = await run("longSeed", n);
      const unresolved = await run("longSeed", resumeN, 1);
      for (const [op] of ops) {
        if (op === "restart" || op === "connectLocal") continue; // their journals are made in the rounds above
        const profiled = args["long-profile"].split(",").includes(op);
        if (profiled) { await cdp.send("Profiler.enable"); await cdp.send("Profiler.start"); }
        await run("longRun", op, op === "resume" ? unresolved : namespace, op === "burst" ? burstN : bodyBytes);
        if (!profiled) continue;
        const self = selfTimes((await cdp.send("Profiler.stop")).profile);
        const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(args["profile-top"] ?? 25));
        console.log(`CPU profile of ${op}, by self time:\n${top.map(([k, v]) => `${ms(v).padStart(12)}  ${k}`).join("\n")}`);
      }
      await run("longRun", "close", namespace);
    }
    const range = (list, f) => `${f(pct(list, 50))} (${f(Math.min(...list))}–${f(Math.max(...list))})`;
    const rows = ops.map(([op, what]) => {
      const runs = figures[op];
      if (op === "connectLocal") what = `connect on localStorage, ${figures.localStored} intents (as many as fit)`;
      return { what, longest: range(runs.map((r) => r.longestThread), (x) => x.toFixed(0)),
        wallOfIt: range(runs.map((r) => r.longestWall), (x) => x.toFixed(0)),
        over: range(runs.map((r) => r.over50), (x) => x.toFixed(0)),
        main: range(runs.map((r) => r.mainThread), (x) => x.toFixed(0)),
        wall: range(runs.map((r) => r.wall), (x) => x.toFixed(0)) };
    });
    console.log(table(rows, [["operation", (r) => r.what], ["longest task, thread ms", (r) => r.longest],
      ["its wall ms", (r) => r.wallOfIt], ["tasks over 50 ms (thread)", (r) => r.over],
      ["main thread, ms", (r) => r.main], ["operation's wall, ms", (r) => r.wall]]));
    console.log(`median (range) of ${rounds} rounds. Target: no task of the SDK's over 50 ms of thread time; the body's main thread ≤ 3× raw fetch's`);
    results.longTasks = figures;
  }

  // ---- 6. memory ----------------------------------------------------------
  if (wanted("memory")) {
  section(`6. Memory across ${N.memory} commands (after a forced GC, journal cleared)`);
  const m = await run("memory", N.memory);
  console.log(table(m, [["commands", (r) => r.done], ["JS heap", (r) => `${(r.heapBytes / 2 ** 20).toFixed(2)} MiB`],
    ["wasm memory", (r) => `${(r.wasmBytes / 2 ** 20).toFixed(2)} MiB`]]));
  const first = m[1], last = m.at(-1);
  console.log(`after the first tenth → the end: JS heap ${((last.heapBytes - first.heapBytes) / 1024).toFixed(0)} KiB, wasm memory ${((last.wasmBytes - first.wasmBytes) / 1024).toFixed(0)} KiB`);
  results.memory = m;
  }
} finally {
  await browser.close();
  await gateway.stop();
}

// ---- 7. core -----------------------------------------------------------------
if (wanted("core") && !args["skip-core"]) {
  section("7. Core (criterion)");
  const out = execFileSync("cargo", ["bench", "-q", "-p", "wow-command-client", "--features", "json-text", "--bench", "core", "--", "--noplot"],
    { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  // The figures only: names, time and throughput (not the change since the last run).
  const lines = out.split("\n").filter((l) => (/time:|thrpt:/.test(l) && !l.includes("%")) || /^[a-z]+\//.test(l));
  console.log(lines.join("\n"));
  results.core = lines;
}
if (args.out) writeFileSync(args.out, JSON.stringify(results, null, 2));
console.log(`\nmachine: ${results.machine.cpu}, ${results.machine.memoryGiB} GiB; ${results.machine.chromium}; ${results.machine.node}; ${results.machine.rustc}`);
