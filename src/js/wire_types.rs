//! The TypeScript declarations of the wire types whose field lists are
//! `wire_object!`s in the core: written from those lists by the core's
//! `wire_fields` test, never by hand. After a change to a list:
//! `WOW_ACCEPT=1 cargo test -p wow-command-core --lib wire_fields`.

use wasm_bindgen::prelude::*;

/// The command client's wire types.
#[cfg(feature = "client")]
#[wasm_bindgen(typescript_custom_section)]
const CLIENT: &'static str = r#"
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
"#;

/// The consumer's.
#[cfg(feature = "consumer")]
#[wasm_bindgen(typescript_custom_section)]
const CONSUMER: &'static str = r#"
/**
 * An input identity's record in the consumer's store: started before the
 * effect, done after it.
 */
export interface EffectRecord {
  /** The stored layout's version. */
  schemaVersion: number;
  /** Storage namespace. */
  namespace: string;
  /** The input identity: also the external system's idempotency key. */
  identity: string;
  /** Where the effect stands. */
  state: "started" | "done";
  /**
   * How many times the effect was started (more than 1 only after a
   * reconciliation said to run it again).
   */
  attempt: number;
  /** The deliverer that started the current attempt. */
  owner: string;
  /** When the current attempt started (ms since the epoch). */
  startedAt: number;
  /** Until when its deliverer counts as alive where no lock tells. */
  leaseUntil: number;
  /** When it was recorded done. */
  finishedAt?: number;
  /** The effect's result (JSON), once done. */
  result?: unknown;
  /** Whether `done` came from a reconciliation rather than the effect's own return. */
  reconciled: boolean;
  /** The last failure of the effect, if it threw. */
  lastError?: string;
  /** Compare-and-swap revision: 0 before the first write. */
  revision: number;
}
"#;
