import type { StorageAdapter } from "./wow_command_client.js";

/** One file per key under `dir`, atomic replace and fsync; compareAndSet atomic within one process. */
export function fileAdapter(dir: string): StorageAdapter;
