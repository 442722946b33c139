// One process using the package as a server-side user would, over a
// file-backed journal; the test kills it with SIGKILL mid-flight. It runs in
// Node.js, and unchanged in Deno and Bun (tests/edge/runtimes.test.mjs).
//   node node-process.mjs <send|resume|intents|probe|consume|race> <dir> <ns> <gateway> [json]
// Prints one JSON line per result.
import { WowClient } from "../../pkg/node.js";
import { IdempotentConsumer } from "../../pkg/consumer-node.js";
import { fileAdapter } from "../../pkg/node-adapters.js";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { storedCount } from "../support/gateway.mjs";
import { clientMode } from "./client-modes.mjs";

const [mode, dir, namespace, baseUrl, arg] = process.argv.slice(2);
const storage = fileAdapter(dir);
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

if (mode === "race") {
  // Delivers each identity at `startAt` (so two processes race), the effect
  // appending a line to effects.log in the directory and taking 150 ms.
  const { identities, startAt } = JSON.parse(arg);
  const consumer = await IdempotentConsumer.open({ storage, namespace, leaseMs: 10_000 });
  await new Promise((r) => setTimeout(r, Math.max(0, startAt - Date.now())));
  const outcomes = await Promise.all(identities.map((identity) => consumer.handle(identity, async (key) => {
    appendFileSync(join(dir, "effects.log"), `${key} ${process.pid}\n`);
    await new Promise((r) => setTimeout(r, 150));
    return { by: process.pid };
  }).then((o) => ({ identity, status: o.status, by: o.result.by }), (e) => ({ identity, error: e.code, message: e.message }))));
  print(outcomes);
} else if (mode === "consume") {
  // The effect posts a command keyed by the identity, then (with `hang`)
  // never returns: the process dies between the effect and its record.
  const { identity, aggregateId, hang } = JSON.parse(arg);
  const consumer = await IdempotentConsumer.open({ storage, namespace, leaseMs: 300 });
  let effects = 0;
  try {
    const outcome = await consumer.handle(identity, async (key) => {
      effects += 1;
      const r = await fetch(`${baseUrl}/account/${aggregateId}/lock_amount`, {
        method: "PUT",
        headers: { "Content-Type": "application/json", "Command-Request-Id": key, "Command-Wait-Stage": "PROCESSED" },
        body: JSON.stringify({ amount: 1 }),
      });
      print({ effectDone: r.status });
      if (hang) await new Promise(() => {});
      return { status: r.status };
    }, {
      // Ask the external system whether the effect happened.
      async reconcile(key, record) {
        const found = await storedCount(baseUrl, "account", aggregateId, key);
        print({ reconciled: found, previousAttempt: record.attempt });
        return found > 0 ? { done: { status: 200, recovered: true } } : "run";
      },
    });
    print({ outcome, effects });
  } catch (e) {
    print({ error: e.code, message: e.message, effects });
  }
} else {
  await clientMode(WowClient, { mode, storage, namespace, baseUrl, arg, print });
}
