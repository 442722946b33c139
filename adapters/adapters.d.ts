import type { StorageAdapter } from "./wow_command_client.js";

/** The revision in a stored record's JSON: 0 when absent, -1 when unreadable. */
export function storedRevision(text: string | null | undefined): number;

/** Minimal shape of a Workers KV namespace binding. */
export interface KvNamespaceLike {
  /** The value under `key`, or null. */
  get(key: string): Promise<string | null>;
  /** Stores `value` under `key`. */
  put(key: string, value: string): Promise<void>;
  /** Removes `key`. */
  delete(key: string): Promise<void>;
  /** One page of the keys under `prefix`, from `cursor`. */
  list(options: { prefix?: string; cursor?: string }): Promise<{ keys: { name: string }[]; list_complete: boolean; cursor?: string }>;
}

/** Minimal shape of a Durable Object's storage. */
export interface DurableObjectStorageLike {
  /** The value under `key`, or undefined. */
  get(key: string): Promise<unknown>;
  /** Stores `value` under `key`. */
  put(key: string, value: string): Promise<void>;
  /** Removes `key`; whether it was there. */
  delete(key: string): Promise<boolean>;
  /** Every entry under `prefix`. */
  list(options: { prefix?: string }): Promise<Map<string, unknown>>;
  /** Runs `closure` as one transaction: what makes the adapter's compareAndSet atomic. */
  transaction<T>(closure: (txn: DurableObjectStorageLike) => Promise<T>): Promise<T>;
}

/** Workers KV: no compare-and-swap, eventually consistent. */
export function kvAdapter(kv: KvNamespaceLike): StorageAdapter;
/** A Durable Object's storage, with an atomic compareAndSet. */
export function durableObjectAdapter(storage: DurableObjectStorageLike): StorageAdapter;
/** Minimal shape of a Deno KV store (`Deno.Kv`). */
export interface DenoKvLike {
  /** The entry under `key`, with its versionstamp (null when absent). */
  get(key: unknown[]): Promise<{ key: unknown[]; value: unknown; versionstamp: string | null }>;
  /** Stores `value` under `key`. */
  set(key: unknown[], value: string): Promise<unknown>;
  /** Removes `key`. */
  delete(key: unknown[]): Promise<void>;
  /** The entries between `start` and `end`. */
  list(selector: { start: unknown[]; end: unknown[] }): AsyncIterable<{ key: unknown[]; value: unknown }>;
  /** An atomic operation: the adapter's compareAndSet checks a versionstamp and sets, or does nothing. */
  atomic(): {
    /** Fails the operation unless `key` still has `versionstamp`. */
    check(entry: { key: unknown[]; versionstamp: string | null }): ReturnType<DenoKvLike["atomic"]>;
    /** Sets `key` if every check holds. */
    set(key: unknown[], value: string): ReturnType<DenoKvLike["atomic"]>;
    /** Commits; `ok` says whether the checks held. */
    commit(): Promise<{ ok: boolean }>;
  };
}

/** Deno KV: strongly consistent, compareAndSet an atomic versionstamp check (consumers exclude across isolates). Values hold at most 64 KiB. */
export function denoKvAdapter(kv: DenoKvLike, options?: { prefix?: unknown[] }): StorageAdapter;
/** In memory, with compareAndSet. */
export function memoryAdapter(map?: Map<string, string>): StorageAdapter;
