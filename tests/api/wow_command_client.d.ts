/* tslint:disable */
/* eslint-disable */

declare global {
  interface SymbolConstructor { readonly dispose: unique symbol }
}

/** A storage adapter for edge KV stores; values are JSON strings. */
export interface StorageAdapter {
    /** The value stored under `key`, or null. */
    get(key: string): Promise<string | null> | string | null;
    /** Stores `value` under `key`, durably once it resolves. */
    set(key: string, value: string): Promise<void> | void;
    /** Removes `key` (absent is fine). */
    delete(key: string): Promise<void> | void;
    /** Every key under `prefix`, or every `[key, value]` pair. */
    list(prefix: string): Promise<string[] | [string, string][]> | string[] | [string, string][];
    /** Atomic compare-and-swap on the stored record's revision, when the store has one. `flush`: the
     * write must be durable before it resolves (an unresolved intent, an effect); a store that always
     * is may ignore it. */
    compareAndSet?(key: string, expectedRevision: number, value: string, flush?: boolean): Promise<boolean> | boolean;
    /** Removes every key in one batch (pruning, sign-out), when the store can; else each is deleted. */
    deleteMany?(keys: string[]): Promise<void> | void;
}



/** How far a command has travelled: accepted by the bus, processed (its events stored), then the stages downstream. */
export type CommandStage = "SENT" | "PROCESSED" | "SNAPSHOT" | "PROJECTED" | "EVENT_HANDLED" | "SAGA_HANDLED";
/** Every error code Wow itself defines (its `ErrorCodes`, and since 9 its query codes); a context adds its own domain codes. */
export type WowErrorCode = "Ok" | "NotFound" | "BadRequest" | "IllegalArgument" | "IllegalState" | "RequestTimeout"
| "TooManyRequests" | "DuplicateRequestId" | "CommandValidation" | "RewriteNoCommand" | "EventVersionConflict"
| "DuplicateAggregateId" | "CommandExpectVersionConflict" | "SourcingVersionConflict" | "IllegalAccessDeletedAggregate"
| "IllegalAccessOwnerAggregate" | "IllegalAccessSpaceAggregate" | "InternalServerError" | "BatchTaskError"
| "UnsupportedMediaType" | "BiDeploymentInspectionInconsistent" | "BiDeploymentInspectionUnavailable"
| "BiDeploymentInspectionTimeout" | "QuerySchemaValidation" | "IllegalAccessQueryScope";
/** The codes the client gives a failure itself: nothing usable came from the server, or it was not to be trusted. */
export type ClientErrorCode = "InvalidCommand" | "StorageUnavailable" | "IntentBusy" | "IntentKeyReused" | "IntentOfAnotherUser" | "NotInConflict"
| "Queued" | "Withdrawn" | "NotWithdrawable" | "TransportError" | "MisroutedAnswer" | "NotSent" | "Cancelled" | "Aborted" | "Offline"
| "ModuleRestarted" | "ClientFreed" | "SigningOut" | `HttpStatus${number}`;
/** How a call ended: succeeded, refused (rejected, conflict), or not known yet (unknown, escalated: confirmed later, never resent blindly). */
export type OutcomeStatus = "succeeded" | "rejected" | "unknown" | "conflict" | "escalated";
/**
 * Where an intent stands. "queued": written, nothing sent, waiting while an earlier intent of its
 * scope is unsettled (`waitsFor`). "withdrawn": settled by `withdraw` before anything was sent.
 */
export type IntentState = "pending" | "sending" | "unknown" | "succeeded" | "rejected" | "conflict" | "escalated"
| "queued" | "withdrawn";

/** What a caller's `confirm` (or `confirmBatch`) is asked: did this aggregate append a stream with this requestId? */
export interface ConfirmQuestion {
    aggregateId: string;
    requestId: string;
    resource: string;
    tenantId?: string;
    contextAlias?: string;
    /** The appended stream's version and commandId are wanted. */
    needFacts: boolean;
    /** The user the intent was made under (`connect({ user })`): ask your history as this user. */
    user: string | null;
}

/** What `headers()` is told: who the request acts for, what it is, and the intents it concerns. */
export interface HeadersContext {
    /** The user the intents were made under: give this user's credentials. */
    user: string | null;
    /** "command": an attempt of an intent; "history": a look at its event history; "snapshot": `awaitDownstream`'s read. */
    purpose: "command" | "history" | "snapshot";
    intentIds: string[];
}

/** A caller's confirmer's answer. */
export interface ConfirmAnswer {
    /** true: appended; false: confirmed not appended. Throw when you cannot tell. */
    appended: boolean;
    version?: number;
    commandId?: string;
}

/** `confirmBatch`'s answer about one question: it names the intent it is about (both ids must match). */
export interface ConfirmBatchAnswer extends ConfirmAnswer {
    aggregateId: string;
    requestId: string;
}

/**
 * `client.history`: whether history answers, as this client last learned it. While it does not, the
 * probe (one per namespace and source of history, across tabs and workers) looks again at `nextLookAt`;
 * every intent that needs history's word waits for that look.
 */
export interface HistoryStatus {
    available: boolean;
    /** While unavailable: since when (epoch ms), when it is looked at next, how many looks failed in a row. */
    since?: number;
    nextLookAt?: number;
    failures?: number;
    /** Questions waiting for history's answer in this client. */
    waiting: number;
    /** Messages from other tabs and workers dropped as unreadable, or with times no probe could have written. */
    droppedMessages: number;
}

/** `WowClient.connect`'s options; `baseUrl` and `user` are required. */
export interface ConnectOptions {
    /** The gateway's absolute http(s) URL, without credentials, query or fragment; command paths are appended to it, and no request goes anywhere else. */
    baseUrl: string;
    /**
     * Who is signed in (the user's id), or null for an app without sign-in. Every intent is recorded
     * with it, and only a client of the same user sends, retries, resumes, lists or confirms it: an
     * intent left by one user is never sent with the next user's credentials. Records of builds before
     * users count as null's (`adopt()` makes them the current user's).
     */
    user: string | null;
    /** Header names a command's own `headers` may not carry, besides Authorization, Cookie and Proxy-Authorization (credentials go through `headers`, never into storage). */
    secretHeaders?: string[];
    /** The largest answer read from the gateway, in bytes (default 8 MiB): a command's, a history query's, a stage stream's in all. A larger one is treated as lost (confirmed first). */
    maxAnswerBytes?: number;
    /**
     * The Wow version the gateway runs (`"9.1.3"`; a generated module exports it as `wowVersion`, from
     * its OpenAPI document). It decides the query shape history is asked in: from 8.11 Wow's `filter`
     * (the only one Wow 10 will read), checked once per aggregate type before it is trusted (a
     * requestId never used must count 0); before 8.11, or when not given, the `condition` of 8.10, which
     * Wow 9 still reads. Never learned from a query's answer.
     */
    wow?: string;
    /**
     * Where intents are kept, written before each is sent (default "indexedDB", which only browsers
     * and Service Workers have). Elsewhere pass an adapter (`fileAdapter` from
     * `wow-command-client/adapters/node`, `kvAdapter`, `denoKvAdapter`, `durableObjectAdapter` from
     * `wow-command-client/adapters`, or your own), or "memory": kept only while the process lives.
     */
    storage?: "indexedDB" | "localStorage" | "memory" | StorageAdapter;
    namespace?: string;
    /** Caller timeout per attempt, ms (default 30000); also bounds each history query. Ends only the local wait. */
    timeoutMs?: number;
    waitStage?: CommandStage;
    /** Server-side Command-Wait-Timeout, ms (default: timeoutMs). */
    waitTimeoutMs?: number;
    retry?: { maxAttempts?: number; baseMs?: number; maxMs?: number; maxConfirms?: number };
    /** Fresh headers per request (auth); never persisted. Told the user the request acts for and what it is (`HeadersContext`): give that user's token. */
    headers?: (context: HeadersContext) => Record<string, string> | Promise<Record<string, string>>;
    /** Your own confirmation source (query model, BFF route), asked about one intent at a time. */
    confirm?: (question: ConfirmQuestion) => ConfirmAnswer | Promise<ConfirmAnswer>;
    /**
     * Your own confirmation source asked about many intents at once (up to 1000, asked together); used
     * instead of `confirm`. Answer about each you can tell, naming its aggregateId and requestId; one you
     * leave out was not answered. Throw when you cannot tell at all.
     */
    confirmBatch?: (questions: ConfirmQuestion[]) => ConfirmBatchAnswer[] | Promise<ConfirmBatchAnswer[]>;
    /** Also send Command-Wait-Timout (servers before 8.4). */
    legacyWaitTimeout?: boolean;
    requestId?: "v7" | "v4";
    retentionDays?: number;
    /** Resume unresolved intents after connecting (only with Web Locks). */
    resume?: boolean;
    /**
     * Asks the browser to keep this origin's storage under pressure (`navigator.storage.persist()`)
     * without waiting for the answer (Firefox answers only when the user answers its prompt);
     * the answer is `client.persistence`.
     */
    persistStorage?: boolean;
    /** How long `headers`, `confirm` and each storage-adapter operation may take before it counts as failed, ms (default 10000; 0: unbounded). */
    callbackTimeoutMs?: number;
    /** The longest command body, as JSON text in UTF-16 code units (default 1048576); a longer one is refused before it is persisted. */
    maxBodyChars?: number;
    /** The deepest nesting of arrays and objects in a command body (default 64, at most 512). */
    maxBodyDepth?: number;
    /**
     * While the runtime is offline nothing is sent or asked and no budget is spent; the intent waits in
     * the journal (reason "offline"). "wait" (default): a call keeps waiting until the runtime is back
     * online (or its signal aborts). "return": it settles at once (`send` with status "unknown" and
     * reason "offline", `sendAndWait` rejecting with code "Offline"); the `online` event resumes it.
     */
    offline?: "wait" | "return";
    /**
     * Told each lifecycle event of what this client drives (`IntentTelemetryEvent`): attempt sent, stage
     * element, attempt ended, confirmation asked and answered, retry scheduled, outcome. Delivered after
     * the current task's work; what it returns, throws or rejects changes nothing.
     */
    onEvent?: (event: IntentTelemetryEvent) => void;
    /**
     * Told the history probe's events (`HistoryTelemetryEvent`): each failed look at history, and history
     * answering again (`client.history` is the same state, read at any time). Delivered as `onEvent`'s.
     */
    onHistory?: (event: HistoryTelemetryEvent) => void;
    /**
     * Told when the module stopped (a trap, or the engine's stack ran out inside it) and this client moved
     * to a fresh instance (`RestartTelemetryEvent`). Delivered as `onEvent`'s.
     */
    onRestart?: (event: RestartTelemetryEvent) => void;
    /** Each attempt carries a W3C `traceparent`: the requestId's 32 hex digits as the trace id, a new span id per attempt (the gateway's CORS must allow the header). */
    traceContext?: boolean;
    /** Told once when an intent becomes escalated (its history could not be asked); it then waits on the history probe, and is confirmed when history answers again. */
    onEscalated?: (outcome: Outcome) => void;
    /** Whether a stage past SNAPSHOT has been reached, for `awaitDownstream` (a throw or a rejection is "not yet"). */
    checkDownstream?: (question: DownstreamQuestion) => boolean | Promise<boolean>;
}

/**
 * One state change of an intent (`client.subscribe`), from this client, another tab or the Service
 * Worker. `version` 1; an announcement from an older build has only intentId, state and revision,
 * and null in the other fields.
 */
export interface IntentEvent {
    version: 1;
    intentId: string;
    /** The user the intent was made under; null for none (and from builds before users). */
    user: string | null;
    intentKey: string | null;
    requestId: string | null;
    aggregate: IntentRecord["aggregate"] | null;
    state: IntentState;
    /** The record's revision: grows with every write of the intent. */
    revision: number;
    /** How many attempts were sent. */
    attempts: number | null;
    appended: boolean | null;
    reason: string | null;
    /** The last CommandResult's error code, when it was not "Ok". */
    errorCode: string | null;
    /** When the record was written (epoch ms). */
    at: number | null;
    /** The intent's scope, when it has one. */
    scope: string | null;
    /** While queued: the earlier intent of its scope it waits for. */
    waitsFor: string | null;
}

/**
 * The history probe's event (`connect({ onHistory })`): `historyDown` after each failed look (since when,
 * when it looks next, failures in a row), `historyBack` when a look is answered again (since when it had
 * been down). `waiting`: questions waiting in this client.
 */
export interface HistoryTelemetryEvent {
    version: 1;
    kind: "historyDown" | "historyBack";
    at: number;
    available: boolean;
    since: number;
    nextLookAt?: number;
    failures?: number;
    waiting: number;
}

/**
 * The module stopped (a trap, or the engine's stack ran out inside it) and this client moved to a
 * fresh instance (`connect({ onRestart })`): its waiting calls ended with `ModuleRestarted`, its locks
 * were let go, and its intents are confirmed and driven again from the journal. `restarts`: how many
 * in the last minute (at most 5; then calls say why until a minute has passed).
 */
export interface RestartTelemetryEvent {
    version: 1;
    kind: "restarted";
    at: number;
    restarts: number;
    /** What stopped the module, e.g. "RangeError: Maximum call stack size exceeded". */
    reason: string;
    /**
     * The intents set aside before this restart: the module stopped twice while handling each (not
     * counting its stack running out). Each is moved where unreadable records go (`quarantined()`),
     * so that no tab drives it again and stops its module; usually empty.
     */
    setAside: string[];
}

/** One lifecycle event of an intent this client drives (`connect({ onEvent })`). Nothing secret: no body, no headers but `traceparent`. */
export interface IntentTelemetryEvent {
    version: 1;
    kind: "attemptSent" | "stage" | "attemptEnded" | "confirmAsked" | "confirmAnswered" | "retryScheduled" | "outcome";
    /** When it happened (epoch ms). */
    at: number;
    intentId: string;
    intentKey: string | null;
    requestId: string;
    aggregate: IntentRecord["aggregate"];
    state: IntentState;
    waitStage: CommandStage;
    /** The server-side wait (`Command-Wait-Timeout`), ms. */
    serverWaitMs: number;
    /** The attempt's number (0 before the first). */
    attempt: number;
    commandId: string | null;
    sentAt: number | null;
    /** How long the caller waited for this attempt, ms. */
    callerTimeoutMs: number | null;
    endedAt: number | null;
    waitEndedBy: "answer" | "timeout" | "cancelled" | "streamCut" | "lost" | "notSent" | "offline" | null;
    /** How the attempt ended: "succeeded", `{ failed: code }` or `{ unknown: why }`; null while it runs. */
    answer: unknown;
    errorCode: string | null;
    appended: boolean | null;
    reason: string | null;
    /** attemptSent, with `traceContext`. */
    traceparent?: string;
    /** stage: the element's stage and whether it succeeded. */
    stage?: CommandStage;
    succeeded?: boolean;
    /** confirmAnswered. */
    answerOfHistory?: "appended" | "notAppended" | "unavailable";
    /** retryScheduled: when the next attempt is due (epoch ms). */
    retryAt?: number;
}

/** What `client.subscribe` reports: every field given must match. */
export interface IntentFilter {
    intentId?: string;
    intentKey?: string;
    states?: IntentState[];
}

/** The last argument of every call that waits. */
export interface CallOptions {
    /**
     * Ends the caller's wait at once with CommandError code "Aborted" (`appended: false` while nothing
     * was sent, otherwise null). The intent is not withdrawn: this client goes on driving it, and
     * `resume()` finishes it if the page goes away first.
     */
    signal?: AbortSignal;
    /**
     * `send`, `sendAndWait` and `sendAndWaitStream`: told the intent's id once, when this call first
     * writes its record (before anything is sent), so a UI can follow it with `subscribe` while the call
     * waits. A keyed intent found settled, or driven by another tab, is not written by this call: its
     * Outcome names it. What `onIntent` returns or throws changes nothing.
     */
    onIntent?: (intentId: string) => void;
}

export interface DownstreamOptions extends CallOptions {
    /** Default: the intent's wait stage. */
    stage?: CommandStage;
    /** How long to wait, ms (default: the connect option timeoutMs). */
    timeoutMs?: number;
    /** Overrides the `checkDownstream` connect option for this call. */
    check?: (question: DownstreamQuestion) => boolean | Promise<boolean>;
}

/** What `checkDownstream` (or `awaitDownstream`'s `check`) is asked: has this stage caught up with the append? */
export interface DownstreamQuestion {
    stage: CommandStage;
    intentId: string;
    requestId: string;
    resource: string;
    aggregateId: string;
    tenantId?: string;
    ownerId?: string;
    contextAlias?: string;
    /** The appended stream's version, when known. */
    version: number | null;
    /** The user the intent was made under. */
    user: string | null;
}

/** `signOut`'s options. */
export interface SignOutOptions {
    /** Remove everything of the user on this device, unresolved intents included (reported), not only the settled ones. */
    purge?: boolean;
}

/** What `signOut` and `clear` did with the user's intents on this device. */
export interface SignOutReport {
    /** How many records were removed. */
    removed: number;
    /** The unresolved intents removed (with `purge`, and by `clear`): each may have been appended, or may still be; tell the person. */
    unresolved: IntentRecord[];
    /** How many unresolved intents were kept (parked): nobody drives them until the same user connects again. */
    parked: number;
    /** Intents another tab or worker was driving: left as they are. */
    busy: string[];
}

/** What `awaitDownstream` resolves to. */
export interface DownstreamOutcome extends Outcome {
    /** The stage reached, or null when the wait ended first (then `downstreamPending` still names it). */
    downstreamReached: CommandStage | null;
}

/** A command to send: where it goes, its body, its wait, and the intent it is. */
export interface Command {
    /** The aggregate it goes to; `id` may be left out on a create (one is made and kept with the intent). */
    aggregate: { contextAlias?: string; resource: string; id?: string; tenantId?: string; ownerId?: string };
    /** The command's snake_case name, the path's last segment (`create_account`). */
    action?: string;
    /** Default POST for a create, PUT otherwise. */
    method?: "POST" | "PUT" | "PATCH" | "DELETE";
    /** The whole path instead of aggregate + action. */
    path?: string;
    body?: unknown;
    /** The business intent's key: the same key in the namespace is the same intent (same requestId), never a second one. */
    intentKey?: string;
    /**
     * Commands whose order matters (on one aggregate, say `"account:" + id`): the intents of one scope in
     * the namespace are sent strictly in the order their records were first written, one at a time,
     * across tabs, workers and reloads. An intent waits ("queued") while an earlier one of its scope is
     * unsettled; an unknown or escalated one holds the scope until history answers. Leave it out to send
     * on its own, as fast as the gateway answers.
     */
    scope?: string;
    /**
     * The command creates its aggregate: sent to `/{resource}/{action}` (the id goes in the
     * `Command-Aggregate-Id` header, not the path) by POST. Leave it out on a create and the gateway
     * answers NotFound for `/{resource}/{id}/{action}` (the error's message ends "a create needs create: true").
     */
    create?: boolean;
    /** Whether the aggregate id is a path segment (default: yes, except on a create). */
    idInPath?: boolean;
    waitStage?: CommandStage;
    waitContext?: string;
    waitProcessor?: string;
    waitFunction?: string;
    waitTailStage?: CommandStage;
    expectedVersion?: number;
    timeoutMs?: number;
    waitTimeoutMs?: number;
    /**
     * Extra headers kept with the intent and sent with every attempt (`Command-Header-*` and the like).
     * Never a credential: Authorization, Cookie, Proxy-Authorization or a `secretHeaders` name is a
     * TypeError (give credentials through `connect({ headers })`, asked per request, never stored).
     * Nor a `Command-Header-<key>` whose key Wow 9 reserves (`trace_id`, `command_operator`,
     * `command_wait_*`, `compensate.*` …): the gateway refuses it, so it is a TypeError here.
     */
    headers?: Record<string, string>;
}

/**
 * What `sendAndWait` adds to a CommandResult when history, not the gateway, said the intent
 * succeeded (its other members are declared from the core's field list, beside FunctionInfo).
 */
export interface CommandResult {
    /** Set when success was established by asking the history. */
    confirmedByHistory?: boolean;
}

/**
 * One element of a stage stream: a CommandResult, or an ErrorInfo (an error event). `if (element.stage)`
 * tells them apart; `succeeded` is false on every failed element.
 */
export type StreamElement = CommandResult | (ErrorInfo & { stage?: undefined });

/** How a call ended, and what is known of its intent. */
export interface Outcome {
    status: OutcomeStatus;
    intentId: string;
    requestId: string;
    intentKey: string | null;
    /** true / false / null = not confirmed. */
    appended: boolean | null;
    result: CommandResult | null;
    error: ErrorInfo | null;
    /** Appended, but this wait stage (past PROCESSED) was not observed. */
    downstreamPending: CommandStage | null;
    appendedVersion: number | null;
    appendedCommandId: string | null;
    reason: string | null;
    attempts: number;
}

/** `sendAndWaitStream`'s handle: every element as it arrives (`for await`), and the outcome at the end. */
export interface ResultStream extends AsyncIterable<StreamElement> {
    /** The same elements as a ReadableStream. */
    stream: ReadableStream<StreamElement>;
    /** The outcome, once the stream is over. */
    outcome: Promise<Outcome>;
}

/** What `resume()` did: the outcomes of what it drove, and the intents another tab or worker was driving. */
export interface ResumeReport { driven: Outcome[]; busy: string[] }
/** An entry of the journal this build cannot read (damaged, or a newer build's), kept, never dropped. */
export interface QuarantinedEntry { key: string; reason: string }

/** An intent as the journal keeps it. */
export interface IntentRecord {
    schemaVersion: number;
    namespace: string;
    /** The user it was made under (`connect({ user })`); absent for an app without sign-in and for records of builds before users. */
    user?: string;
    intentId: string;
    intentKey?: string;
    requestId: string;
    aggregate: AggregateIdentity;
    command: { method: string; path: string; body: unknown; expectedVersion?: number; create: boolean; wait: WaitSpec;
    headers?: [string, string][] };
    fingerprint: string;
    state: IntentState;
    attempts: Attempt[];
    lastResult?: CommandResult;
    reason?: string;
    appended?: boolean;
    /** The appended stream's version, once an answer or history said it. */
    appendedVersion?: number;
    createdAt: number;
    updatedAt: number;
    revision: number;
    /** The scope it is sent in (`Command.scope`). */
    scope?: string;
    /** Its place in the scope: intents of a scope are sent in this order. */
    scopeSeq?: number;
    /** While queued: the earlier intent of its scope it waits for. */
    waitsFor?: string;
}

/** Every failure: the whole CommandResult and the outcome, typed. */
export class CommandError extends Error {
    code: string;
    outcome: OutcomeStatus;
    appended: boolean | null;
    stage: CommandStage | null;
    commandId: string | null;
    requestId: string;
    intentId: string;
    aggregateId: string | null;
    aggregateName: string | null;
    contextName: string | null;
    tenantId: string | null;
    aggregateVersion: number | null;
    errorMsg: string;
    bindingErrors: BindingError[];
    result: Record<string, unknown>;
    commandResult: CommandResult | null;
    reason: string | null;
    detail: Outcome;
}



/** Where an intent's aggregate lives. */
export interface AggregateIdentity {
    /** Context alias in paths, when the aggregate is in another context. */
    contextAlias?: string;
    /** Resource name, e.g. `account`. */
    resource: string;
    /** Tenant, when the aggregate has no static tenant. */
    tenantId?: string;
    /** Owner, when the aggregate is owned. */
    ownerId?: string;
    /**
     * The aggregate id: always known, client-generated for creates whose
     * id the server would otherwise generate (so the outcome can be confirmed).
     */
    aggregateId: string;
}

/** What to wait for, as persisted. */
export interface WaitSpec {
    /** Target stage. */
    stage: CommandStage;
    /** Context filter. */
    context?: string;
    /** Processor filter. */
    processor?: string;
    /** Function filter. */
    function?: string;
    /** Chain tail stage (with `SAGA_HANDLED`). */
    tailStage?: CommandStage;
    /** Server-side wait deadline, ms. */
    timeoutMs: number;
}

/** One send of the intent, always with the intent's requestId. */
export interface Attempt {
    /** 1-based attempt number. */
    number: number;
    /** When it was sent (epoch ms). */
    sentAt: number;
    /** The server's commandId, once any answer carried it. */
    commandId?: string;
    /** When it ended. */
    endedAt?: number;
    /** How it ended. */
    outcome?: unknown;
    /** When the caller's wait for it was due to end (epoch ms). */
    callerDeadline?: number;
    /** What ended the caller's wait for it (`cancelled`: its signal aborted; the drive went on). */
    waitEndedBy?: "answer" | "timeout" | "cancelled" | "streamCut" | "lost" | "notSent" | "offline";
}

/** One stage's signal from the gateway, as Wow sends it; `succeeded` is false on a failed one. */
export interface CommandResult {
    /** Id of this signal (the SSE `id:`). */
    id: string;
    /** The command the wait was registered for (constant across saga chains). */
    waitCommandId: string;
    /** The stage that produced it. */
    stage: CommandStage;
    /** Bounded context of the aggregate the signal is about. */
    contextName: string;
    /** Aggregate name. */
    aggregateName: string;
    /** Tenant, e.g. `(0)`. */
    tenantId: string;
    /** Aggregate id (a saga target's in chain mode). */
    aggregateId: string;
    /** Version after processing; `null` for gateway-level failures. */
    aggregateVersion: number | null;
    /** The original request's idempotency key. */
    requestId: string;
    /** The command this signal concerns. */
    commandId: string;
    /** The function that produced it. */
    function: FunctionInfo;
    /** `Ok` on success. */
    errorCode: string;
    /** Human-readable message; not a contract. */
    errorMsg: string;
    /** Field errors; omitted when empty. */
    bindingErrors?: BindingError[];
    /** Handler-set key/values, kept as received (`{}` when absent). */
    result: Record<string, unknown>;
    /** When the signal was produced (epoch ms). */
    signalTime: number;
    /** The server's read-only `succeeded` flag, as received. */
    succeeded?: boolean;
}

/** The function that produced a stage's signal (the gateway, the aggregate, a projector, a saga). */
export interface FunctionInfo {
    /** The function's kind. */
    functionKind: string;
    /** Its bounded context. */
    contextName: string;
    /** Its processor, e.g. `Account`, `TransferSaga`, `CommandGateway`. */
    processorName: string;
    /** Its name, e.g. `onCommand`, `onEvent`, `send`. */
    name: string;
}

/** A field the gateway's validation refused, and why. */
export interface BindingError {
    /** The field. */
    name: string;
    /** What is wrong with it. */
    msg: string;
}

/**
 * A failure without a stage: a plain error body (a stream's error event, a
 * timeout, a proxy's page), or an outcome's error.
 */
export interface ErrorInfo {
    /** The code. */
    errorCode: string;
    /** Human-readable message. */
    errorMsg: string;
    /** Field errors. */
    bindingErrors?: BindingError[];
    /** The server's `succeeded` flag, as received. */
    succeeded?: boolean;
}



/**
 * A client of one Wow command gateway, over one intent journal.
 */
export class WowClient {
    private constructor();
    /** Frees its memory in the module now, rather than when it is garbage-collected; what the journal holds stays there. */
    free(): void;
    /** `free()`, for `using`. */
    [Symbol.dispose](): void;
    /**
     * Makes the intents recorded with no user (by builds before users, or
     * by a client connected with `user: null`) this client's user's: the
     * documented way to take over what an app without sign-in left. Each
     * is rewritten under its lock (one another tab drives is left as it
     * is); resolves to how many. Nothing for a client with `user: null`.
     */
    adopt(): Promise<number>;
    /**
     * Waits, without sending anything, for a stage past PROCESSED of an
     * intent confirmed appended (an Outcome with `downstreamPending`):
     * SNAPSHOT by reading the aggregate's snapshot until its version
     * reaches the appended one, the others by asking `check` (or the
     * `checkDownstream` connect option). Resolves to the Outcome with
     * `downstreamReached` set to the stage, or null when `timeoutMs` passed first.
     */
    awaitDownstream(intent: string, options?: DownstreamOptions): Promise<DownstreamOutcome>;
    /**
     * Removes every intent of this client's user on this device, as
     * `signOut({ purge: true })` does, and keeps the client open: this
     * client's drives stop, each unresolved intent is removed under its
     * lock (one another tab drives is left, in `busy`), and the unresolved
     * ones removed are reported (each may have been appended).
     */
    clear(): Promise<SignOutReport>;
    /**
     * Asks the history about one intent (by intentId/requestId or business
     * key) and records the answer. Never sends the command.
     */
    confirm(intent: string, options?: CallOptions): Promise<Outcome>;
    /**
     * Connects: validates options, opens the storage, optionally resumes
     * unresolved intents in the background. A mistake in the options
     * rejects with a `TypeError` naming it; a storage that cannot be opened,
     * with `CommandError` `StorageUnavailable`.
     */
    static connect(options: ConnectOptions): Promise<WowClient>;
    /**
     * One intent's record (by intentId, requestId or intentKey), or null
     * when the journal has none: one read, however long the journal is.
     */
    intent(intent: string): Promise<IntentRecord | null>;
    /**
     * The journal's records, oldest first, for UIs.
     */
    intents(): Promise<IntentRecord[]>;
    /**
     * Deletes settled intents older than the retention window.
     */
    prune(): Promise<number>;
    /**
     * Entries this build cannot read: damaged ones, moved aside (never
     * dropped), and records of a newer build, left in place for it.
     */
    quarantined(): Promise<QuarantinedEntry[]>;
    /**
     * Asks the browser to keep this origin's storage under pressure
     * (`navigator.storage.persist()`); call it from a user gesture where the
     * browser prompts (Firefox). Resolves as `persistence` does, and becomes
     * it; `{ signal }` ends the wait for a prompt (CommandError `Aborted`).
     */
    requestPersistentStorage(options?: CallOptions): Promise<boolean | null>;
    /**
     * Drives every persisted unresolved intent of this namespace: each under
     * its Web Lock, so two tabs never drive the same intent.
     */
    resume(options?: CallOptions): Promise<ResumeReport>;
    /**
     * Retries an intent that met a version conflict, on the caller's say-so:
     * the same intent and requestId, now expecting `expectedVersion`
     * (reload the aggregate, decide, then call this). Resolves to the Outcome.
     * One retried already and on its way (by another tab, or a second
     * click) is sent once: this call resolves with its outcome. One queued,
     * escalated or settled otherwise fails with `NotInConflict`.
     */
    retry(intent: string, decision: { expectedVersion?: number | null }, options?: CallOptions): Promise<Outcome>;
    /**
     * Sends a command over the SSE stage stream. The handle is an async
     * iterable (and `.stream`, a ReadableStream) of every CommandResult as
     * its bytes arrive, failed ones included; it throws `CommandError` at
     * the end unless the outcome succeeded. `.outcome` resolves to the Outcome.
     */
    sendAndWaitStream(command: Command, options?: CallOptions): ResultStream;
    /**
     * Sends a command and waits for its wait stage; resolves to the final
     * CommandResult, throws `CommandError` for every other outcome.
     */
    sendAndWait(command: Command, options?: CallOptions): Promise<CommandResult>;
    /**
     * Sends a command and resolves to its `Outcome`; business outcomes
     * (rejected, conflict, unknown, escalated) do not throw.
     */
    send(command: Command, options?: CallOptions): Promise<Outcome>;
    /**
     * Signs the user out on this device, then frees the client: its
     * drives stop and its other calls end (`ClientFreed`). By default the
     * user's settled intents are removed and its unresolved ones parked
     * (kept; nobody drives them until the same user connects again).
     * `{ purge: true }` removes everything of the user here (each
     * unresolved intent under its lock, reported in `unresolved` so the
     * app can tell the person; the quarantine and the IndexedDB database
     * too once nothing of anyone is left in the namespace).
     */
    signOut(options?: SignOutOptions): Promise<SignOutReport>;
    /**
     * Calls `listener` with an event per state change of an intent of this
     * client's user in this namespace, written by this client, another tab
     * or the Service Worker;
     * `filter` narrows it (`intentId`, `intentKey`, `states`). Returns the
     * function that stops it; unsubscribing never withdraws an intent.
     */
    subscribe(listener: (event: IntentEvent) => void, filter?: IntentFilter): () => void;
    /**
     * Withdraws every queued intent of `scope`, as `withdraw` does each;
     * resolves to how many. The scope's head (pending, on the wire, or
     * unknown) is left as it is.
     */
    withdrawScope(scope: string): Promise<number>;
    /**
     * Withdraws an intent (by intentId, requestId or intentKey) that has
     * not begun an attempt: a queued one, or one pending and never sent.
     * It settles `withdrawn`, is never sent, every call waiting on it
     * rejects with `CommandError` `Withdrawn`, and its scope's next intent
     * may go. Resolves to its Outcome. An intent that has begun an attempt
     * may be appended, which only history can tell: the call rejects with
     * `CommandError` `NotWithdrawable` and changes nothing.
     */
    withdraw(intent: string): Promise<Outcome>;
    /**
     * Whether history answers, as this client last learned it: while it
     * does not, since when, when the probe looks next and how many looks
     * failed in a row; and how many questions wait for it. Read without
     * awaiting; `onHistory` tells each change (`historyDown`, `historyBack`).
     */
    readonly history: HistoryStatus;
    /**
     * The namespace this client's intents live in.
     */
    readonly namespace: string;
    /**
     * Whether the browser keeps this origin's storage under pressure: the
     * answer to `persistStorage: true` (or to the latest
     * `requestPersistentStorage()`), else whether it is kept already.
     * `true`, `false`, or `null` where there is no StorageManager; never
     * rejects. Pending while a permission prompt waits for the user.
     */
    readonly persistence: Promise<boolean | null>;
}

/** What `init()` loads the module from: its URL, a Response, its bytes, or a compiled WebAssembly.Module. */
