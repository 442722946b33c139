// An app as a user writes it: the package by name, bundled by Vite. It
// initialises the client's module and leaves the consumer's to
// IdempotentConsumer.open (the client-only app leaves the client's to connect).
import init, { WowClient, CommandError } from "wow-command-client";
import { IdempotentConsumer } from "wow-command-client/consumer";
import { memoryAdapter } from "wow-command-client/adapters";

try {
  await init();
  const client = await WowClient.connect({ user: null, baseUrl: location.origin, namespace: "bundled" });
  const id = `bundled-${crypto.randomUUID()}`;
  const result = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
    create: true, body: { name: id, balance: 1 } });
  const consumer = await IdempotentConsumer.open({ storage: memoryAdapter() });
  const effect = await consumer.handle(result.requestId, () => "done");
  document.body.dataset.result = JSON.stringify({ stage: result.stage, aggregateId: result.aggregateId,
    requestId: result.requestId, effect: effect.status, errorClass: typeof CommandError });
} catch (e) {
  document.body.dataset.result = JSON.stringify({ error: String(e) });
}
