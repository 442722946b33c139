// Bench 8's figures where there is no trace to read: the longest gap in a
// page's own tasks while each operation runs (a frame-gap probe), in
// Firefox and WebKit (Chromium too, beside bench 8's traced thread times).
// A message posted to itself, again each time it arrives: the longest time
// between two arrivals is the longest the page could run nothing of its own
// (a long task, plus what this machine's preemption adds: a wall figure).
// Each round in a fresh page (a context of its own): a journal of `--journal`
// intents written straight into IndexedDB, then the operations in turn.
//   node bench/gaps.mjs [--engines firefox,webkit] [--rounds 5] [--journal 10000]
//     [--body 900000] [--burst 500] [--ops connect,connectLocal]
import { parseArgs } from "node:util";
import { launch, missing } from "../tests/support/engines.mjs";
import { createAccount, startGateway } from "../tests/support/gateway.mjs";
import { orderBody } from "./page/order.mjs";
import { edgeRound } from "../tests/support/edge.mjs";

const { values: args } = parseArgs({ options: { engines: { type: "string", default: "firefox,webkit" },
  rounds: { type: "string", default: "5" }, journal: { type: "string", default: "10000" },
  body: { type: "string", default: "900000" }, burst: { type: "string", default: "500" }, ops: { type: "string" } } });
const rounds = Number(args.rounds), n = Number(args.journal), bytes = Number(args.body), burst = Number(args.burst);
const ops = [["connect", `connect on ${n} intents`], ["intents", "intents()"], ["quarantined", "quarantined()"],
  ["prune", "prune()"], ["body", `sendAndWait, ${Math.round(bytes / 1000)} KB body`],
  ["bodyRaw", "  raw fetch + JSON.stringify, same body"], ["burst", `a burst of ${burst} send()`],
  ["restart", "a restart after a trap (the trapping call's task included)"],
  ["connectLocal", "connect on localStorage, as many as fit"]].filter(([op]) => !args.ops || args.ops.split(",").includes(op)); // `--ops connect,prune`

/** In the page: a client's journal of `n` copies of a real record, and `window.probe(op)`. */
async function setUp(page, base, account) {
  await page.goto(`${base}/pkg/index.js`);
  return page.evaluate(async ({ n, body, account, ns, edge }) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    const options = { user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 30_000, storage: "indexedDB" };
    const lock = (body) => ({ aggregate: { resource: "account", id: account }, action: "lock_amount", body });
    const first = await WowClient.connect(options);
    await first.sendAndWait(lock({ amount: 1 }));
    const [template] = await first.intents();
    first.free();
    const month = Date.now() - 31 * 86_400_000;
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open(`wow-command-client/${ns}`);
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const t = db.transaction(["intents"], "readwrite");
    for (let i = 0; i < n; i++) {
      const intentId = `${template.intentId.slice(0, 24)}${String(i).padStart(12, "0")}`;
      const at = i % 4 === 0 ? month + i : Date.now() - n + i;
      t.objectStore("intents").put({ ...template, intentId, requestId: intentId, createdAt: at, updatedAt: at, revision: 1 }, intentId);
    }
    await new Promise((resolve, reject) => { t.oncomplete = resolve; t.onerror = () => reject(t.error); });
    db.close();
    // localStorage: as many copies as its quota takes, in a namespace of their own.
    const local = `${ns}-ls`;
    let stored = 0;
    for (; stored < n; stored++) {
      const intentId = `${template.intentId.slice(0, 24)}${String(stored).padStart(12, "0")}`;
      try {
        localStorage.setItem(`wow-intents/${local}/${intentId}`, JSON.stringify({ ...template, namespace: local, intentId,
          requestId: intentId, createdAt: month + stored, updatedAt: month + stored, revision: 1 }));
      } catch {
        break;
      }
    }
    // The caller's deep recursion (tests/support/edge.mjs), for the trap.
    const edgeRound = (0, eval)(`(${edge})`);
    let client;
    const run = {
      connect: async () => { client = await WowClient.connect(options); },
      intents: () => client.intents(),
      quarantined: () => client.quarantined(),
      prune: () => client.prune(),
      body: () => client.sendAndWait(lock(body)),
      bodyRaw: async () => {
        const r = await fetch(`${location.origin}/account/${account}/lock_amount`, { method: "PUT", body: JSON.stringify(body),
          headers: { "Content-Type": "application/json", "Command-Request-Id": crypto.randomUUID(), "Command-Wait-Stage": "PROCESSED" } });
        return r.json();
      },
      burst: (k) => Promise.all(Array.from({ length: k }, () => client.send(lock({ amount: 1 })))),
      // Calls from the edge of the page's stack, a task a round, until one
      // stops the module inside; then the next call, on the fresh instance.
      restart: async () => {
        let restarted = false;
        const c = await WowClient.connect({ ...options, onRestart: () => { restarted = true; } });
        const call = () => (c.send(lock({ amount: 1 })).catch(() => {}), 0);
        for (let round = 0; round < 60 && !restarted; round++) {
          edgeRound(call, round);
          await new Promise((r) => setTimeout(r));
        }
        if (!restarted) throw new Error("restart: no call stopped the module");
        await c.intents();
        c.free();
      },
      connectLocal: async () => {
        (await WowClient.connect({ ...options, storage: "localStorage", namespace: local })).free();
        localStorage.clear();
      },
    };
    window.probe = async (op, arg) => {
      let last = performance.now(), gap = 0, done = false;
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        const now = performance.now();
        gap = Math.max(gap, now - last);
        last = now;
        if (!done) channel.port2.postMessage(0);
      };
      channel.port2.postMessage(0);
      const t0 = performance.now();
      await run[op](arg);
      const wall = performance.now() - t0;
      done = true;
      gap = Math.max(gap, performance.now() - last);
      channel.port1.close();
      return { gap, wall };
    };
    return stored;
  }, { n, body: orderBody(bytes), account, ns: `gaps-${Math.random().toString(36).slice(2, 10)}`, edge: String(edgeRound) });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const range = (xs, f) => `${f(median(xs))} (${f(Math.min(...xs))}–${f(Math.max(...xs))})`;

const gateway = await startGateway({ www: true, quiet: true });
try {
  console.log(`## 8b. Longest gap in the page's own tasks: ${rounds} rounds, ${n} IndexedDB intents, a ${Math.round(bytes / 1000)} KB body, a burst of ${burst}`);
  for (const engine of args.engines.split(",")) {
    const why = missing(engine);
    if (why) { console.log(`${engine}: not measured (${why})`); continue; }
    const browser = await launch(engine);
    const figures = Object.fromEntries(ops.map(([op]) => [op, []]));
    try {
      for (let round = 0; round < rounds; round++) {
        const page = await browser.newPage();
        figures.localStored = await setUp(page, gateway.base, await createAccount(gateway.base, "gaps"));
        for (const [op] of ops) figures[op].push(await page.evaluate(({ op, burst }) => window.probe(op, burst), { op, burst }));
        await page.close();
      }
    } finally {
      await browser.close();
    }
    console.log(`\n${engine}:`);
    console.log(`${"operation".padEnd(46)}${"longest gap, ms".padStart(20)}${"operation's wall, ms".padStart(24)}`);
    for (let [op, what] of ops) {
      const runs = figures[op];
      if (op === "connectLocal") what = `connect on localStorage, ${figures.localStored} intents`;
      console.log(`${what.padEnd(46)}${range(runs.map((r) => r.gap), (x) => x.toFixed(0)).padStart(20)}${range(runs.map((r) => r.wall), (x) => x.toFixed(0)).padStart(24)}`);
    }
  }
  console.log(`\nmedian (range) of ${rounds} rounds; wall time (this machine's preemption included). Target: no gap over 50 ms.`);
} finally {
  await gateway.stop();
}
