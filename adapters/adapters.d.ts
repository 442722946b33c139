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
/** In memory, with compareAndSet. */
export function memoryAdapter(map?: Map<string, string>): StorageAdapter;
