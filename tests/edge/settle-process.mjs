// A script that awaits one call and does nothing after it, as a user's
// server-side script would: it must end by itself once the call has
// settled, and not before. Every pending call keeps the process alive; an
// idle client (an escalated intent waiting on the history probe) does not.
// Runs unchanged in Node.js, Deno and Bun (tests/edge/settles.test.mjs).
//   node settle-process.mjs <gateway> <aggregateId>
import { WowClient } from "../../pkg/node.js";

const [baseUrl, id] = process.argv.slice(2);
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
const client = await WowClient.connect({ user: null, baseUrl, storage: "memory" });
try {
  const result = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
    create: true, body: { name: id, balance: 1 } });
  print({ resolved: result.stage, requestId: result.requestId });
} catch (e) {
  print({ rejected: e.code, outcome: e.outcome });
}
