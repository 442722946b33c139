// What a restart of the module costs (src/web/instance.js), in Node on the
// built package: the time from a call that stopped the module (it ran out
// of stack inside it) to the answer of the next call, made at once and
// deferred to the restart (after the calls queued meanwhile), against the
// same call (\`intents()\` of a small memory journal) on a live module. Each
// round is a fresh process (restarts are bounded per minute); the median
// and spread of the rounds, per number of clients the restart moves.
//
//   node bench/restart.mjs [--rounds 7] [--clients 1,10]
import { execFileSync } from "node:child_process";

const root = new URL("..", import.meta.url).pathname;
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) =>
  a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc, []));
const rounds = Number(args.rounds ?? 7);
const counts = String(args.clients ?? "1,10").split(",").map(Number);

// One round, in its own process: prints { restart, live } in ms.
const round = `
const { WowClient } = await import(${JSON.stringify(`${root}pkg/node.js`)});
const { edgeRound } = await import(${JSON.stringify(`${root}tests/support/edge.mjs`)});
const n = Number(process.argv.at(-1));
let restarted = false;
const clients = [];
for (let i = 0; i < n; i++) {
  clients.push(await WowClient.connect({ user: null, baseUrl: "http://127.0.0.1:9", storage: "memory", namespace: "bench-" + i,
    onRestart: () => { restarted = true; } }));
}
const client = clients[0];
for (let i = 0; i < 20; i++) await client.intents();
let t = performance.now();
for (let i = 0; i < 20; i++) await client.intents();
const live = (performance.now() - t) / 20;
// A send runs deep enough into the module for a call at the edge to stop it there.
const command = { aggregate: { resource: "account", id: "a" }, action: "lock_amount", body: { amount: 1, note: "x".repeat(100) } };
// A call that throws lets the next frame up call again, with a little more stack (edgeRound).
const call = () => { client.send(command).catch(() => {}); return 0; };
for (let i = 0; i < 60 && !restarted; i++) {
  edgeRound(call, i);
  if (restarted) break;
  // The module stopped in this round when the restart is due: time the next call.
  t = performance.now();
  const after = client.intents();
  await after;
  const spent = performance.now() - t;
  if (restarted) { console.log(JSON.stringify({ restart: spent, live })); process.exit(0); }
}
console.log(JSON.stringify({ restart: null, live }));
`;

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
console.log(`restart of the module (Node ${process.version}), ${rounds} rounds each, a fresh process per round`);
console.log("clients  restart + next call, median (min–max)   the same call on a live module   ratio\n");
for (const n of counts) {
  const restart = [], live = [];
  for (let r = 0; r < rounds; r++) {
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", round, String(n)], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim().split("\n").pop());
    if (out.restart === null) throw new Error(`round ${r} with ${n} clients: the module did not stop`);
    restart.push(out.restart);
    live.push(out.live);
  }
  const m = median(restart), l = median(live);
  console.log(`${String(n).padStart(7)}  ${m.toFixed(2).padStart(7)} ms (${Math.min(...restart).toFixed(2)}–${Math.max(...restart).toFixed(2)})`
    + `${l.toFixed(3).padStart(24)} ms${(m / l).toFixed(0).padStart(18)}×`);
}
