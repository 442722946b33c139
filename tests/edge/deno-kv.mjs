// The Deno KV adapter in Deno itself (run with --unstable-kv), over a local
// KV file that several processes share:
//   deno run -A --unstable-kv deno-kv.mjs contract <kv file>
//   deno run -A --unstable-kv deno-kv.mjs client <kv file> <gateway> <aggregate id>
//   deno run -A --unstable-kv deno-kv.mjs race <kv file> <namespace> <identity> <start at> <effects log>
// Prints one JSON line.
import { WowClient } from "../../pkg/node.js";
import { IdempotentConsumer } from "../../pkg/consumer-node.js";
import { denoKvAdapter } from "../../pkg/adapters.js";

const [mode, path, ...rest] = Deno.args;
// Opening a local KV file that another process is opening or writing can
// itself answer "database is locked"; the adapter retries its operations,
// the opener is the caller's, so it retries here as an app would.
const kv = await openKv(path);
const adapter = denoKvAdapter(kv);
const print = (value) => console.log(JSON.stringify(value));
const record = (revision) => JSON.stringify({ revision });

if (mode === "contract") {
  const seen = {};
  seen.absent = await adapter.get("wow-intents/ns/a");
  seen.firstSwap = await adapter.compareAndSet("wow-intents/ns/a", 0, record(1));
  seen.staleSwap = await adapter.compareAndSet("wow-intents/ns/a", 0, record(1));
  seen.nextSwap = await adapter.compareAndSet("wow-intents/ns/a", 1, record(2));
  await adapter.set("wow-intents/ns/b", record(5));
  await adapter.set("wow-intents/other/c", record(1));
  seen.read = await adapter.get("wow-intents/ns/a");
  seen.listed = (await adapter.list("wow-intents/ns/")).map(([key]) => key);
  await adapter.delete("wow-intents/ns/b");
  seen.afterDelete = (await adapter.list("wow-intents/ns/")).map(([key]) => key);
  // Ten swaps from the same revision at once: exactly one wins.
  const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => adapter.compareAndSet("wow-intents/ns/a", 2, record(3 + i))));
  seen.racingWinners = racing.filter(Boolean).length;
  print(seen);
} else if (mode === "client") {
  const [baseUrl, id] = rest;
  const client = await WowClient.connect({ user: null, baseUrl, storage: adapter, namespace: "deno-kv" });
  const result = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
    create: true, body: { name: id, balance: 1 } });
  const listed = (await client.intents()).filter((r) => r.aggregate.aggregateId === id).map((r) => r.state);
  print({ requestId: result.requestId, stage: result.stage, listed });
} else if (mode === "race") {
  const [namespace, identity, startAt, log] = rest;
  const consumer = await IdempotentConsumer.open({ storage: adapter, namespace, leaseMs: 10_000 });
  await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
  const outcome = await consumer.handle(identity, async () => {
    await Deno.writeTextFile(log, `${Deno.pid}\n`, { append: true });
    await new Promise((r) => setTimeout(r, 200));
    return { by: Deno.pid };
  });
  print({ status: outcome.status, by: outcome.result.by });
}
kv.close();
Deno.exit(0);

async function openKv(file) {
  for (let pause = 10; ; pause *= 2) {
    try {
      return await Deno.openKv(file);
    } catch (e) {
      if (pause > 1280 || !/database is locked/i.test(String(e?.message))) throw e;
      await new Promise((r) => setTimeout(r, pause + Math.random() * pause));
    }
  }
}
