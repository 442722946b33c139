import type { ConnectOptions, ResumeReport } from "./index.js";

/** The Background Sync tag the page registers and the worker answers. */
export declare const SYNC_TAG: "wow-command-client";

/** What a drive in the worker did, for its namespace and user. */
export interface BackgroundReport extends ResumeReport { namespace: string; user: string | null }

/** `connect`'s options, without `storage` (the worker's journal is always IndexedDB); `user` names whose intents it drives. */
export type BackgroundOptions = Omit<ConnectOptions, "storage" | "resume">;

/**
 * In a Service Worker: drives the intents pages left unresolved when the worker starts, on the
 * Background Sync `sync` event (tag `SYNC_TAG`), on a page's message `{ type: SYNC_TAG }` and on
 * `online`, one drive at a time. Returns the drive.
 */
export declare function driveInBackground(
  options: BackgroundOptions | BackgroundOptions[] | (() => BackgroundOptions | BackgroundOptions[] | Promise<BackgroundOptions | BackgroundOptions[]>),
  settings?: { tag?: string; onReport?: (reports: BackgroundReport[]) => void | Promise<void> },
): () => Promise<BackgroundReport[]>;

/**
 * In a page: asks the browser to wake the worker once it has a network (Background Sync), or, where
 * there is none (Firefox, Safari), posts to the active worker; false when no worker is active.
 */
export declare function requestBackgroundSync(tag?: string): Promise<boolean>;
