import type { StorageAdapter } from "./wow_command_client.js";

/** The revision in a stored record's JSON: 0 when absent, -1 when unreadable. */
export function storedRevision(text: string | null | undefined): number;

/** Minimal shape of a Workers KV namespace binding. */
export interface KvNamespaceLike {
  get(key: string): Promise<string | null>;
  put(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  list(options: { prefix?: string; cursor?: string }): Promise<{ keys: { name: string }[]; list_complete: boolean; cursor?: string }>;
}

/** Minimal shape of a Durable Object's storage. */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: string): Promise<void>;
  delete(key: string): Promise<boolean>;
  list(options: { prefix?: string }): Promise<Map<string, unknown>>;
  transaction<T>(closure: (txn: DurableObjectStorageLike) => Promise<T>): Promise<T>;
}

/** Workers KV: no compare-and-swap, eventually consistent. */
export function kvAdapter(kv: KvNamespaceLike): StorageAdapter;
/** A Durable Object's storage, with an atomic compareAndSet. */
export function durableObjectAdapter(storage: DurableObjectStorageLike): StorageAdapter;
/** Minimal shape of a Deno KV store (`Deno.Kv`). */
export interface DenoKvLike {
  get(key: unknown[]): Promise<{ key: unknown[]; value: unknown; versionstamp: string | null }>;
  set(key: unknown[], value: string): Promise<unknown>;
  delete(key: unknown[]): Promise<void>;
  list(selector: { start: unknown[]; end: unknown[] }): AsyncIterable<{ key: unknown[]; value: unknown }>;
  atomic(): {
    check(entry: { key: unknown[]; versionstamp: string | null }): ReturnType<DenoKvLike["atomic"]>;
    set(key: unknown[], value: string): ReturnType<DenoKvLike["atomic"]>;
    commit(): Promise<{ ok: boolean }>;
  };
}

/** Deno KV: strongly consistent, compareAndSet an atomic versionstamp check (consumers exclude across isolates). Values hold at most 64 KiB. */
export function denoKvAdapter(kv: DenoKvLike, options?: { prefix?: unknown[] }): StorageAdapter;
/** In memory, with compareAndSet. */
export function memoryAdapter(map?: Map<string, string>): StorageAdapter;
