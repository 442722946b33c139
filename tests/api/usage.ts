// Compiled (not run) by `npm test` against the generated package types:
// the README's usage must type-check, and misuse must not.
import init, {
  WowClient, CommandError,
  type Command, type Outcome, type CommandResult, type IntentEvent, type IntentState,
  type HistoryStatus, type IntentTelemetryEvent, type RestartTelemetryEvent, type ConfirmBatchAnswer,
  type HeadersContext, type SignOutReport, type IntentRecord,
} from "../../pkg/index.js";
import initConsumer, { IdempotentConsumer, EffectError, type EffectOutcome } from "../../pkg/consumer-web.js";
import { kvAdapter, memoryAdapter, type KvNamespaceLike } from "../../pkg/adapters.js";
import { fileAdapter } from "../../pkg/node-adapters.js";
import { driveInBackground, requestBackgroundSync } from "../../pkg/service-worker.js";
import { mountDevtools, diagnostics, type Diagnostics } from "../../pkg/devtools.js";

async function example(): Promise<void> {
  await init();
  const client = await WowClient.connect({ user: null,
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
    // `stage` tells a CommandResult from an error event's ErrorInfo.
    if (element.stage) void element.aggregateVersion;
    // @ts-expect-error: an error event has no version.
    else void element.aggregateVersion;
  }
  const record: IntentRecord | undefined = (await client.intents())[0];
  void record?.attempts[0]?.waitEndedBy;
  void record?.aggregate.aggregateId;
  const outcome: Outcome = await stream.outcome;
  void outcome.downstreamPending;
  const report = await client.resume();
  void report.driven.length;
  // @ts-expect-error: waitStage must be a stage name.
  await client.send({ ...command, waitStage: "DONE" });

  // The caller's wait ends; the intent does not.
  const ac = new AbortController();
  await client.sendAndWait(command, { signal: ac.signal }).catch((e: unknown) => {
    if (e instanceof CommandError && e.code === "Aborted") void e.appended;
  });
  await client.resume({ signal: ac.signal });
  const o = await client.send({ ...command, waitStage: "SNAPSHOT" });
  const d = await client.awaitDownstream(o.intentId, { timeoutMs: 5_000, signal: ac.signal });
  const reached: Outcome["downstreamPending"] = d.downstreamReached;
  void reached;
  await client.awaitDownstream(o.intentId, { stage: "PROJECTED", check: async (q) => q.version !== null });
  // @ts-expect-error: a call's options take a signal, not a timeout.
  await client.confirm(o.intentId, { timeoutMs: 5 });
  await WowClient.connect({ user: null, baseUrl: "https://gateway.example", offline: "return", onEscalated: (x) => void x.reason });
  // @ts-expect-error: offline is "wait" or "return".
  await WowClient.connect({ user: null, baseUrl: "https://gateway.example", offline: "queue" });
  const drive = driveInBackground(async () => ({ baseUrl: "https://gateway.example", namespace: "user-42", user: "u-42" }));
  void drive;
  const woken: boolean = await requestBackgroundSync();
  void woken;
}

async function consumerExample(kv: KvNamespaceLike): Promise<void> {
  await initConsumer();
  const consumer = await IdempotentConsumer.open({
    storage: kvAdapter(kv),
    namespace: "mailer",
    leaseMs: 10_000,
    reconcile: async (identity, record) => (record.attempt > 3 ? "done" : { run: true }),
  });
  try {
    const outcome: EffectOutcome = await consumer.handle("evt-1", async (key) => key.length);
    const status: "ran" | "skipped" | "reconciled" = outcome.status;
    void status;
  } catch (e) {
    if (e instanceof EffectError && e.code === "NeedsReconciliation") void e.record?.state;
  }
  await IdempotentConsumer.open({ storage: memoryAdapter() });
  await IdempotentConsumer.open({ storage: fileAdapter("/var/lib/app/journal") });
  // @ts-expect-error: a reconciliation answers done or run.
  await consumer.handle("evt-2", () => 1, { reconcile: () => "maybe" });
}

void example;
void consumerExample;

async function subscribeExample(client: WowClient) {
  const stop: () => void = client.subscribe((e: IntentEvent) => {
    const state: IntentState = e.state;
    const appended: boolean | null = e.appended;
    void state; void appended; void e.aggregate?.aggregateId;
  }, { states: ["unknown", "escalated"], intentKey: "order-42/lock" });
  stop();
  // @ts-expect-error: states are intent states.
  client.subscribe(() => {}, { states: ["done"] });
  const kept: boolean | null = await client.persistence;
  void kept;
}

void subscribeExample;

// Confirmation at scale: the probe's state, its telemetry beside the intents', a confirmer of many.
async function history(): Promise<void> {
  const onlyIntents = (event: IntentTelemetryEvent): void => { void event.requestId; };
  const client = await WowClient.connect({ user: null,
    baseUrl: "https://gateway.example",
    onEvent: onlyIntents,
    confirmBatch: async (questions): Promise<ConfirmBatchAnswer[]> =>
      questions.map((q) => ({ aggregateId: q.aggregateId, requestId: q.requestId, appended: false })),
  });
  const status: HistoryStatus = client.history;
  if (!status.available) {
    const next: number | undefined = status.nextLookAt;
    void next;
  }
  await WowClient.connect({ user: null,
    baseUrl: "https://gateway.example",
    onEvent: (event) => { void event.requestId; },
    onRestart: (event: RestartTelemetryEvent) => { const why: string = event.reason; void why; },
    onHistory: (event) => {
      if (event.kind === "historyDown") {
        const since: number = event.since;
        void since;
      }
    },
  });
  // @ts-expect-error an answer of confirmBatch names its intent
  await WowClient.connect({ user: null, baseUrl: "x", confirmBatch: async () => [{ appended: true }] });
}
void history;

// The devtools panel: mounted for a client, its export typed.
async function devtools(client: WowClient): Promise<void> {
  const { element, unmount } = mountDevtools(client, { position: "top-left", theme: "dark", remember: false });
  const exported: Diagnostics | undefined = element?.exportDiagnostics({ bodies: false });
  const attempts: number = exported?.intents[0]?.attempts.length ?? 0;
  const offline: Diagnostics = diagnostics(await client.intents(), { bodies: true });
  void attempts; void offline;
  unmount();
  // @ts-expect-error: not a position
  mountDevtools(client, { position: "middle" });
}
void devtools;

// Users: each client acts for one; sign-out parks or purges, adopt takes over what had none.
async function users(): Promise<void> {
  const client = await WowClient.connect({
    baseUrl: "https://gateway.example",
    user: "u-42",
    secretHeaders: ["X-Api-Key"],
    maxAnswerBytes: 1 << 20,
    wow: "9.1.3",
    headers: (context: HeadersContext) => ({ Authorization: `Bearer ${context.user}:${context.purpose}:${context.intentIds.length}` }),
  });
  const adopted: number = await client.adopt();
  const cleared: SignOutReport = await client.clear();
  const unresolved: IntentRecord[] = cleared.unresolved;
  const report: SignOutReport = await client.signOut({ purge: true });
  const dropped: number = client.history.droppedMessages;
  void adopted; void unresolved; void report; void dropped;
  // @ts-expect-error: user is required (null for an app without sign-in).
  await WowClient.connect({ baseUrl: "https://gateway.example" });
  // @ts-expect-error: purge is a boolean.
  await client.signOut({ purge: "yes" });
}
void users;
