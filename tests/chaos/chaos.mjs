// A Jepsen-style set test: many business intents through the SDK in real
// browser pages (Chromium, Firefox or WebKit: `--engine`), against the test
// gateway in seeded random fault mode, with page reloads, two pages sharing
// one storage, kill -9 of the gateway, callers that abort their wait,
// periods offline, and traps: a page's caller runs out of stack inside the
// module, which stops and restarts (src/web/instance.js) while calls are in
// flight. Then every page resumes until quiet, and a checker reads
// the history (the gateway's query API and, independently, its SQLite file).
//
// The pages reach the gateway through a link that can be cut
// (tests/support/link.mjs). An offline period takes the pages offline as the
// browser would where the engine's driver can (Chromium, Firefox), and cuts
// the link where it cannot (WebKit): the browser then still believes it is
// online while every request fails.
//
// Some updates are scoped (`scope: "account:<id>"`): per account, the scoped
// intents' streams in history must come in the order their records were
// first written (their places, `scopeSeq`).
//
//   node tests/chaos/chaos.mjs --intents 1000 --seed 7 [--engine chromium|firefox|webkit]
//     [--kills 2] [--reloads 4] [--aborts 0.1] [--offline 2] [--scoped 0.3] [--traps 2] [--out FILE]
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launch } from "../support/engines.mjs";
import { startGateway } from "../support/gateway.mjs";
import { cuttableLink } from "../support/link.mjs";
import { edgeRound } from "../support/edge.mjs";

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc, []));
const N = Number(args.intents ?? 1000);
const SEED = Number(args.seed ?? 1);
const KILLS = Number(args.kills ?? 2);
const RELOADS = Number(args.reloads ?? 4);
// The share of calls whose caller aborts its wait, and how many offline periods.
const ABORTS = Number(args.aborts ?? 0.1);
const OFFLINE = Number(args.offline ?? 2);
// The share of updates sent in their account's scope.
const SCOPED = Number(args.scoped ?? 0.3);
const ENGINE = args.engine ?? "chromium";
// How many times a page's caller makes the module trap mid-workload.
const TRAPS = Number(args.traps ?? 2);
const dbDir = mkdtempSync(join(tmpdir(), "wow-chaos-"));
const db = join(dbDir, "events.sqlite");

// Seeded PRNG (mulberry32) for the workload and the schedule.
let state = SEED >>> 0;
const rand = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

let gateway, base;
const fired = {};
// The same port and SQLite file across kills, so pages and history carry on.
// A restart binds the port the killed process held: retried until it binds.
async function start() {
  const port = base ? Number(new URL(base).port) : 0;
  for (let attempt = 1; ; attempt++) {
    try {
      gateway = await startGateway({ db, port, www: true, seed: SEED, quiet: true });
      break;
    } catch (e) {
      if (attempt === 50) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  base = gateway.base;
}
const control = (method, body) => gateway.faults(method, body);

async function collectFired() {
  try {
    const report = await control("GET");
    for (const f of report.fired) fired[f.fault] = (fired[f.fault] ?? 0) + 1;
    await control("DELETE");
  } catch { /* the gateway is down */ }
}

const chaosRates = { drop_response_after_append: 0.06, drop_request: 0.04, unavailable: 0.04,
  fail_processed_after_append: 0.03, cut_stream_after: 0.04, duplicate_delivery: 0.03,
  precheck_false_positive: 0.03, query_unavailable: 0.05, delay: 0.01, reject_before_send: 0.02,
  downstream_fail: 0.03 };
// Progress on stderr, so a run that stops can be told where it stopped.
const progress = (line) => process.stderr.write(`chaos ${ENGINE}: ${line}\n`);

/**
 * Starts `fn(arg)` in `page` and watches it there, so a call that never
 * settles holds no driver session (WebKit's runs one script at a time):
 * what it ended with (`{ value }` or `{ threw }`), `{ reloaded: true }` when
 * the page reloaded meanwhile, or null when it did not settle within `ms`.
 */
let runs = 0;
async function watched(page, fn, arg, ms) {
  const key = `run-${runs++}`;
  // The page's load this call runs in: a call of an earlier load (the page
  // reloaded meanwhile) is told apart even after a later call made the
  // table again.
  const load = await page.evaluate(({ key, fn, arg }) => {
    const ended = (window.chaosCalls ??= {});
    window.chaosLoad ??= Math.random().toString(36).slice(2);
    Promise.resolve().then(() => (0, eval)(`(${fn})`)(arg)).then(
      (value) => { ended[key] = { value: value === undefined ? null : value }; },
      (e) => { ended[key] = { threw: String((e && e.stack) || e) }; });
    return window.chaosLoad;
  }, { key, fn: String(fn), arg: arg ?? null });
  return page.waitFor(({ key, load }) => (window.chaosLoad === load ? window.chaosCalls[key] ?? null : { reloaded: true }),
    { key, load }, ms);
}

/**
 * `fn(arg)` run in `page` ([`watched`]), its value; a failure naming `what`
 * when it does not settle within `ms`, reported with the open intents and
 * each page's `client.history` as the defect it is, never left to the
 * driver's script timeout.
 */
async function inPage(page, what, fn, arg, ms = 180_000) {
  const ended = await watched(page, fn, arg, ms);
  if (!ended) {
    const open = await journalNow().catch((e) => String(e));
    throw new Error(`${what} did not settle within ${ms / 1000} s; the journal and history as the pages see them: ${JSON.stringify(open)}`);
  }
  if ("reloaded" in ended) throw new Error(`${what} threw: the page reloaded`);
  if ("threw" in ended) throw new Error(`${what} threw: ${ended.threw}`);
  return ended.value;
}
let journalNow = async () => null;

const chaosOn = () => control("POST", { random: { seed: SEED, rates: chaosRates } });

async function killGateway() {
  await collectFired();
  await gateway.stop();
  await start();
  await chaosOn();
}

await start();
const link = await cuttableLink(Number(new URL(base).port));
const browser = await launch(ENGINE);
const context = await browser.newContext();
const ns = `chaos-${SEED}`;
const isReady = () => document.body?.dataset.ready === "true";
async function openPage() {
  const page = await context.newPage();
  await page.goto(`${link.base}/?ns=${ns}&noresume&noworker&trace&timeout=1500`);
  if (!(await page.waitFor(isReady, null, 30_000))) throw new Error(`the demo did not load in ${ENGINE}`);
  return page;
}
const pages = [await openPage(), await openPage()];
journalNow = async () => ({
  open: await inPage(pages[1], "intents() in page 1", () => window.demo.client.intents().then((rs) => rs
    .filter((r) => !["succeeded", "rejected", "conflict", "withdrawn"].includes(r.state))
    .map((r) => ({ intentId: r.intentId, state: r.state, scope: r.scope, scopeSeq: r.scopeSeq, attempts: r.attempts.length, reason: r.reason }))),
  null, 20_000).catch((e) => String(e)),
  pages: await Promise.all(pages.map((p, n) => inPage(p, `history in page ${n}`, async () => ({ history: window.demo.client.history,
    now: Date.now(), locks: await navigator.locks?.query(), lastEvents: window.demo.events.slice(-60) }), null, 20_000)
    .catch((e) => String(e)))),
});
progress("pages ready");

/// A page that is loaded and ready (a reload can meet a gateway kill and fail).
async function ensureReady(page) {
  for (let tries = 0; tries < 5; tries++) {
    const ready = await page.waitFor(isReady, null, tries === 0 ? 5_000 : 30_000).catch(() => false);
    if (ready) return;
    await page.reload().catch(() => {});
  }
  throw new Error("a page did not come back");
}

/**
 * One caller's call in `page`, started and watched there ([`watched`]).
 * Resolves to the outcome (`aborted` set when the caller gave up its wait),
 * or null when the call threw or a reload interrupted it.
 */
let unsettled = 0;
async function call(page, { command, stream, abortAfterMs }) {
  const began = Date.now();
  const ended = await watched(page, ({ command, stream, abortAfterMs }) => {
    const c = window.demo.client;
    // A caller that gives up waiting: the intent goes on without it.
    const ac = abortAfterMs === null ? null : new AbortController();
    if (ac) setTimeout(() => ac.abort(), abortAfterMs);
    const options = ac ? { signal: ac.signal } : undefined;
    return (stream ? c.sendAndWaitStream(command, options).outcome : c.send(command, options)).catch((e) => {
      if (e.code === "Aborted") return { ...e.detail, aborted: true };
      throw e;
    });
  }, { command, stream, abortAfterMs }, 120_000).catch(() => ({ interrupted: true }));
  if (ended === null) {
    // A call that does not settle is a defect even where a retry hides it.
    unsettled++;
    progress(`a call did not settle within 120 s (${command.body.op ?? "?"}${stream ? ", a stage stream" : ""}, started ${
      new Date(began).toISOString()}, ${traps} traps before); the journal and history as the pages see them: ${
      JSON.stringify(await journalNow().catch((e) => String(e)))}`);
  }
  return ended?.value ?? null;
}

// Accounts to update, created before the faults start.
const accounts = [];
for (let i = 0; i < 8; i++) {
  const id = `acct-${SEED}-${i}`;
  const o = await inPage(pages[0], `setting up ${id}`, (id) => window.demo.client.send({ aggregate: { resource: "account", id },
    action: "create_account", create: true, body: { name: id, balance: 1_000_000 } }), id);
  if (o.status !== "succeeded") throw new Error(`setup failed: ${JSON.stringify(o)}`);
  accounts.push(id);
}
await chaosOn();

// The workload: creates and updates, JSON and stream, some with business keys.
const ops = [];
for (let i = 0; i < N; i++) {
  const op = `op-${SEED}-${i}`;
  const create = rand() < 0.3;
  const id = create ? `new-${SEED}-${i}` : accounts[Math.floor(rand() * accounts.length)];
  ops.push({ op, stream: rand() < 0.5, abortAfterMs: rand() < ABORTS ? Math.floor(rand() * 40) : null, command: {
    aggregate: { resource: "account", id },
    action: create ? "create_account" : "lock_amount", create,
    body: create ? { name: id, balance: 10, op } : { amount: 1, op },
    ...(rand() < 0.4 ? { intentKey: op } : {}),
    ...(rand() < 0.3 ? { waitStage: "SNAPSHOT" } : {}),
    ...(!create && rand() < SCOPED ? { scope: `account:${id}` } : {}),
  } });
}

const killAt = new Set(Array.from({ length: KILLS }, (_, k) => Math.floor(((k + 1) * N) / (KILLS + 1))));
const reloadAt = new Set(Array.from({ length: RELOADS }, () => Math.floor(rand() * N)));
const offlineAt = new Map(Array.from({ length: OFFLINE }, () => [Math.floor(rand() * N), 300 + Math.floor(rand() * 1500)]));
const trapAt = new Set(Array.from({ length: TRAPS }, () => Math.floor(rand() * N)));
// While the context is offline, no page reloads and the gateway is not
// killed (a reload offline cannot load the page at all).
let online = Promise.resolve();
let offlinePeriods = 0, aborted = 0, abortedBeforeSend = 0;
async function goOffline(ms) {
  offlinePeriods++;
  let back;
  online = new Promise((r) => { back = r; });
  if (context.setOffline) await context.setOffline(true); else link.cut(true);
  await new Promise((r) => setTimeout(r, ms));
  if (context.setOffline) await context.setOffline(false); else link.cut(false);
  back();
}
const started = new Set();
const answered = new Map(); // op → requestId of an outcome the caller received
let reissuedInline = 0;
let next = 0, reloads = 0, kills = 0, traps = 0, trapsMissed = 0;
// The trap running in each page: the other worker's reload of that page waits
// for it (a reload under a trap ended the trap as "the page reloaded").
const trapping = [null, null];

/**
 * A caller deep in its own recursion calls `send` from the stack's edge
 * (tests/support/edge.mjs), round after round, until a call runs out inside
 * the module, which stops and restarts. The command is refused (no
 * aggregate resource) after its body is read, so the sweep writes no
 * intent. True when the page's client restarted.
 */
async function trap(page) {
  return inPage(page, "a trap", async (edgeSource) => {
    const edgeRound = (0, eval)(`(${edgeSource})`);
    const before = window.demo.restarts.length;
    const nested = (n) => (n === 0 ? { leaf: "x".repeat(64) } : { n, list: [nested(n - 1)] });
    const command = { aggregate: {}, action: "lock_amount", body: nested(8) };
    const call = () => { window.demo.client.send(command).catch(() => {}); return 0; };
    for (let round = 0; round < 60 && window.demo.restarts.length === before; round++) {
      edgeRound(call, round);
      await new Promise((r) => setTimeout(r, 0));
    }
    return window.demo.restarts.length > before;
  }, String(edgeRound), 60_000);
}

async function worker(p) {
  while (next < ops.length) {
    const i = next++;
    if (i % 25 === 0) progress(`intent ${i} of ${ops.length}`);
    if (offlineAt.has(i)) void goOffline(offlineAt.get(i));
    if (killAt.has(i)) { await online; kills++; await killGateway(); }
    if (trapAt.has(i)) {
      trapping[p] = trap(pages[p]);
      const fired = await trapping[p].finally(() => { trapping[p] = null; });
      if (fired) traps++; else trapsMissed++;
      progress(`trap ${traps + trapsMissed} in page ${p} at ${new Date().toISOString()}`);
    }
    if (reloadAt.has(i)) {
      await online;
      reloads++;
      await trapping[0]?.catch(() => {});
      await pages[0].reload().catch(() => {});
      await ensureReady(pages[0]);
    }
    const { command, stream, abortAfterMs } = ops[i];
    started.add(ops[i].op);
    let outcome = null;
    for (let tries = 0; tries < 5 && !outcome; tries++) {
      outcome = await call(pages[p], { command, stream, abortAfterMs });
      if (outcome?.aborted) {
        aborted++;
        if (outcome.appended === false) abortedBeforeSend++;
        // Only an answer is an answer: an aborted wait has none.
        break;
      }
      if (outcome) break;
      // As an app would: once the page is back, re-invoke the action only if
      // the intent never reached the journal (otherwise resume() owns it).
      await ensureReady(pages[p]);
      const journaled = await inPage(pages[p], `intents() in page ${p}`, async (op) =>
        (await window.demo.client.intents()).some((r) => r.command.body.op === op), ops[i].op).catch(() => true);
      if (journaled) break;
      reissuedInline++;
    }
    if (outcome?.requestId && !outcome.aborted) answered.set(ops[i].op, outcome.requestId);
  }
}
const lanes = [];
for (let l = 0; l < 6; l++) lanes.push(worker(l % 2));
await Promise.all(lanes);
await online;
await collectFired();

// Quiet: faults off, every page resumes, escalated intents are confirmed by hand,
// intents whose call never reached the journal are re-issued (as an app would).
await control("DELETE");
for (const page of pages) await ensureReady(page);
progress("the workload is done; resuming until quiet");
const intents = () => inPage(pages[0], "intents() in page 0", () => window.demo.client.intents());
let rounds = 0, reissued = 0;
for (; rounds < 20; rounds++) {
  await Promise.all(pages.map((p, n) => inPage(p, `resume() in page ${n}, round ${rounds + 1}`, () => window.demo.resume())));
  const records = await intents();
  for (const r of records.filter((r) => r.state === "escalated")) {
    await inPage(pages[0], `confirm(${r.intentId})`, (id) => window.demo.client.confirm(id), r.intentId);
  }
  const journaled = new Set(records.map((r) => r.command.body.op).filter(Boolean));
  const missing = ops.filter((o) => !journaled.has(o.op));
  reissued += missing.length;
  for (const o of missing) await inPage(pages[1], `re-issuing ${o.op}`, (c) => window.demo.client.send(c), o.command);
  const open = (await intents()).filter((r) => ["pending", "sending", "unknown", "escalated", "queued"].includes(r.state));
  if (open.length === 0 && missing.length === 0) break;
}

// ---------------------------------------------------------------- checker
progress(`quiet after ${rounds + 1} resume rounds; checking history`);
const records = (await intents()).filter((r) => r.command.body.op);
const byOp = new Map();
for (const r of records) byOp.set(r.command.body.op, [...(byOp.get(r.command.body.op) ?? []), r]);
const count = (aggregateId, requestId) => gateway.stored("account", aggregateId, requestId);
let duplicates = 0, lost = 0, multiRequestIds = 0, forgotten = 0, phantom = 0;
for (const [op, requestId] of answered) {
  if (!(byOp.get(op) ?? []).some((r) => r.requestId === requestId)) forgotten++;
}
const states = {};
for (const o of ops) {
  const rs = byOp.get(o.op) ?? [];
  if (rs.length !== 1) multiRequestIds++;
  for (const r of rs) {
    states[r.state] = (states[r.state] ?? 0) + 1;
    const n = await count(r.aggregate.aggregateId, r.requestId);
    if (n > 1) duplicates++;
    if (r.state === "succeeded" && n !== 1) lost++;
    if (r.appended === false && n !== 0) {
      phantom++;
      console.error(`said "not appended" but stored ${n}: ${JSON.stringify({ ...r, command: { ...r.command, body: r.command.body } })}`);
    }
  }
}
// Independently, from the SQLite file.
const sql = "SELECT COUNT(*) FROM (SELECT aggregate_name, aggregate_id, request_id FROM event_stream GROUP BY 1,2,3 HAVING COUNT(*) > 1)";
const sqliteDuplicates = Number(execFileSync("python3", ["-c",
  `import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])`, db, sql]).toString().trim());
const unresolved = records.filter((r) => ["pending", "sending", "unknown", "escalated", "queued"].includes(r.state));
// Per scope: the appended intents' streams in history, by version, against their places.
let outOfOrder = 0, scopedAppended = 0;
for (const scope of new Set(records.map((r) => r.scope).filter(Boolean))) {
  const placed = records.filter((r) => r.scope === scope).sort((a, b) => a.scopeSeq - b.scopeSeq);
  const aggregateId = placed[0].aggregate.aggregateId;
  const order = new Map((await gateway.history("account", aggregateId)).map((requestId, i) => [requestId, i]));
  const inHistory = placed.filter((r) => order.has(r.requestId)).map((r) => order.get(r.requestId));
  scopedAppended += inHistory.length;
  for (let i = 1; i < inHistory.length; i++) if (inHistory[i] < inHistory[i - 1]) outOfOrder++;
}
const report = {
  engine: ENGINE, intents: N, seed: SEED, succeeded: states.succeeded ?? 0, rejected: states.rejected ?? 0,
  conflict: states.conflict ?? 0, escalated: states.escalated ?? 0, duplicates, sqliteDuplicates, lost, forgotten, phantom,
  requestIdsPerIntentViolations: multiRequestIds, unresolved: unresolved.length, scopedAppended, outOfOrder,
  unresolvedList: unresolved.map((r) => ({ requestId: r.requestId, state: r.state, reason: r.reason })),
  retries: records.reduce((n, r) => n + Math.max(0, r.attempts.length - 1), 0),
  confirmed: records.filter((r) => r.attempts.some((a) => a.outcome && a.outcome.unknown !== undefined)).length,
  faultsFired: fired, reloads, gatewayKills: kills, resumeRounds: rounds + 1, reissued: reissued + reissuedInline,
  abortedWaits: aborted, abortedBeforeSend, offlinePeriods, unsettled, traps, trapsMissed,
};
await browser.close();
await link.close();
await gateway.stop();

const rows = [
  ["engine", `${ENGINE} (offline: ${context.setOffline ? "the browser's own" : "the link cut"})`],
  ["intents", report.intents], ["succeeded", report.succeeded], ["rejected", report.rejected],
  ["conflict", report.conflict], ["escalated", report.escalated],
  ["duplicates (must be 0)", `${report.duplicates} (query API), ${report.sqliteDuplicates} (SQLite file)`],
  ["lost (must be 0)", report.lost],
  ["answered intents missing from the journal (must be 0)", report.forgotten],
  ["said \"not appended\" but stored (must be 0)", report.phantom], ["intents without exactly 1 requestId (must be 0)", report.requestIdsPerIntentViolations],
  ["unresolved after resume (must be 0)", report.unresolved],
  ["calls that did not settle within 120 s (must be 0)", report.unsettled],
  ["scoped intents appended", report.scopedAppended], ["scoped intents out of their scope's order (must be 0)", report.outOfOrder],
  ["retries", report.retries],
  ["intents confirmed against history", report.confirmed], ["page reloads", report.reloads],
  ["gateway kill -9", report.gatewayKills], ["resume rounds", report.resumeRounds],
  ["callers that aborted their wait (before anything was sent)", `${report.abortedWaits} (${report.abortedBeforeSend})`],
  ["offline periods", report.offlinePeriods],
  ["traps that stopped the module (must be all tried)", `${report.traps} of ${report.traps + report.trapsMissed}`],
  ["calls re-issued (interrupted before the journal)", report.reissued],
  ...Object.entries(fired).sort().map(([k, v]) => [`fault fired: ${k}`, v]),
];
const width = Math.max(...rows.map(([k]) => k.length));
console.log(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n"));
if (args.out) writeFileSync(args.out, JSON.stringify(report, null, 2));
// A trap that did not stop the module tested nothing: the run fails.
const violations = report.duplicates + report.sqliteDuplicates + report.lost + report.forgotten + report.phantom +
  report.requestIdsPerIntentViolations + report.unresolved + report.outOfOrder + report.unsettled + report.trapsMissed;
console.log(violations === 0 ? "chaos: 1 passed, 0 failed" : "chaos: 0 passed, 1 failed");
process.exit(violations === 0 ? 0 : 1);
