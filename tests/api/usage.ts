// Compiled (not run) by `npm test` against the generated package types:
// the README's usage must type-check, and misuse must not.
import init, { WowClient, CommandError, type Command, type Outcome, type CommandResult } from "../../pkg/index.js";

async function example(): Promise<void> {
  await init();
  const client = await WowClient.connect({
    baseUrl: "https://gateway.example",
    storage: "indexedDB",
    namespace: "user-42",
    timeoutMs: 10_000,
    retry: { maxAttempts: 3 },
    headers: async () => ({ Authorization: "Bearer token" }),
  });
  const command: Command = {
    aggregate: { resource: "account", id: "alice" },
    action: "lock_amount",
    body: { amount: 5 },
    intentKey: "order-42/lock",
  };
  try {
    const result: CommandResult = await client.sendAndWait(command);
    const version: number | null = result.aggregateVersion;
    void version;
  } catch (e) {
    if (e instanceof CommandError) {
      const appended: boolean | null = e.appended;
      const outcome: "succeeded" | "rejected" | "unknown" | "conflict" | "escalated" = e.outcome;
      void appended;
      void outcome;
    }
  }
  const stream = client.sendAndWaitStream({ ...command, waitStage: "SNAPSHOT" });
  for await (const element of stream) {
    void element.errorCode;
  }
  const outcome: Outcome = await stream.outcome;
  void outcome.downstreamPending;
  const report = await client.resume();
  void report.driven.length;
  // @ts-expect-error: waitStage must be a stage name.
  await client.send({ ...command, waitStage: "DONE" });
}

void example;
