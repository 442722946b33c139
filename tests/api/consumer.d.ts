/* tslint:disable */
/* eslint-disable */

declare global {
  interface SymbolConstructor { readonly dispose: unique symbol }
}

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



/** What `reconcile` answers after asking the external system. */
export type Reconciliation = "done" | "run" | { done: unknown } | { run: true };

/** `IdempotentConsumer.open`'s options. */
export interface ConsumerOptions {
    /** The same choices as ConnectOptions.storage (default "indexedDB"). */
    storage?: "indexedDB" | "localStorage" | "memory" | StorageAdapter;
    namespace?: string;
    /** How long a started effect's deliverer counts as alive where there are no Web Locks (default 30000). */
    leaseMs?: number;
    /** How long a delivery waits for a busy identity (default 2 × leaseMs). */
    maxWaitMs?: number;
    /**
     * How long the effect may take, ms (default leaseMs; 0: unbounded). Past it the call rejects
     * with `EffectTimedOut`, the record stays started, and the next delivery reconciles.
     */
    effectTimeoutMs?: number;
    /** How long `reconcile` and each storage-adapter operation may take, ms (default 10000; 0: unbounded). */
    callbackTimeoutMs?: number;
    /** Decides an effect that was started and never recorded done. */
    reconcile?: (identity: string, record: EffectRecord) => Reconciliation | Promise<Reconciliation>;
    /**
     * Accept that an effect may run more than once. Needed only where the store can neither
     * compare-and-swap nor lock across processes (Workers KV, an adapter without compareAndSet,
     * in a runtime without Web Locks); without it such a consumer refuses to open.
     */
    allowDuplicateEffects?: boolean;
}

/** One delivery's options, over the consumer's. */
export interface HandleOptions {
    /** Decides an effect that was started and never recorded done (over ConsumerOptions.reconcile). */
    reconcile?: (identity: string, record: EffectRecord) => Reconciliation | Promise<Reconciliation>;
    /** Overrides ConsumerOptions.maxWaitMs for this delivery. */
    maxWaitMs?: number;
    /** Overrides ConsumerOptions.effectTimeoutMs for this delivery. */
    effectTimeoutMs?: number;
}

/** What `handle` resolves to. */
export interface EffectOutcome<T = unknown> {
    /** ran: the effect ran now; skipped: it was done before; reconciled: reconciliation found it done. */
    status: "ran" | "skipped" | "reconciled";
    identity: string;
    attempt: number;
    /** The effect's return value (stored as JSON; skipped and reconciled return the stored one). */
    result: T | undefined;
    record: EffectRecord;
}

/** Why a delivery failed (`EffectError.code`). */
export type EffectErrorCode = "InvalidIdentity" | "InvalidOptions" | "StorageUnavailable" | "EffectFailed" | "EffectTimedOut"
| "DoneNotRecorded" | "NeedsReconciliation" | "ReconcileFailed" | "Busy" | "Superseded" | "StorageCannotExclude";

/** A failed delivery of an IdempotentConsumer. */
export class EffectError extends Error {
    /** Why it failed. */
    code: EffectErrorCode;
    /** The input identity it was about, when there was one. */
    identity: string | null;
    /** The identity's record as the delivery left it. */
    record: EffectRecord | null;
    /** DoneNotRecorded: what the effect returned. */
    result?: unknown;
}



/**
 * A consumer with side effects that records each input identity durably.
 */
export class IdempotentConsumer {
    private constructor();
    /** Frees its memory in the module now, rather than when it is garbage-collected; what the journal holds stays there. */
    free(): void;
    /** `free()`, for `using`. */
    [Symbol.dispose](): void;
    /**
     * The record of one identity, or null.
     */
    find(identity: string): Promise<EffectRecord | null>;
    /**
     * Forgets an identity: its next delivery runs the effect again.
     */
    forget(identity: string): Promise<void>;
    /**
     * Runs `effect(identity)` unless this identity's effect is already
     * done. Resolves to `{ status: 'ran' | 'skipped' | 'reconciled',
     * identity, attempt, result, record }`; throws `EffectError`.
     */
    handle(identity: string, effect: (identity: string) => unknown, options?: HandleOptions): Promise<EffectOutcome>;
    /**
     * Opens a consumer over the same storage choices as `WowClient`
     * (`'indexedDB'`, `'localStorage'`, `'memory'` or an adapter).
     */
    static open(options?: ConsumerOptions): Promise<IdempotentConsumer>;
    /**
     * Removes done records older than `olderThanMs` (default 7 days);
     * started ones are kept. Resolves to how many were removed.
     */
    prune(older_than_ms?: number | null): Promise<number>;
    /**
     * Every record of the namespace.
     */
    records(): Promise<EffectRecord[]>;
    /**
     * The storage namespace.
     */
    readonly namespace: string;
}

/** What `init()` loads the module from: its URL, a Response, its bytes, or a compiled WebAssembly.Module. */
