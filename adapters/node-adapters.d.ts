import type { StorageAdapter } from "./wow_command_client.js";

/** One file per key under `dir`, atomic replace and fsync; compareAndSet atomic across processes on one host (a lock file per key). */
export function fileAdapter(dir: string): StorageAdapter;
