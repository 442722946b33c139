// The Service Worker entry: drives the intents a page left unresolved in the
// IndexedDB journal when no page is there to do it. Each drive is the same
// `resume()` a page runs: under the intent's Web Lock (so never beside a page
// or another worker driving it), history first for anything that may have
// been sent, the same requestId on a resend. Pages learn the outcomes
// through the journal's usual announcements.
import init, { WowClient } from "./index.js";

/** The Background Sync tag the page registers and the worker answers. */
export const SYNC_TAG = "wow-command-client";

const BUSY_ROUNDS = 5;
const BUSY_PAUSE_MS = 2000;

/**
 * Drives the journal from this Service Worker: when the worker starts, for
 * whatever reason; on the Background Sync `sync` event (tag `SYNC_TAG`); on
 * a page's message `{ type: SYNC_TAG }` (what `requestBackgroundSync` posts
 * where there is no Background Sync: Firefox, Safari); and on `online`. One
 * drive at a time: a wake-up during a drive joins it. `options` are
 * `connect`'s (the storage is always IndexedDB), a list of them (one per
 * namespace and user), or a function returning either, asked at each drive:
 * a worker does not know which user is signed in until it reads it from
 * where the page keeps it. Each names its `user` (null for an app without
 * sign-in): the worker drives that user's intents only, never another's.
 * Options without a user are a mistake the worker reports loudly (the
 * console, and a failed sync), never drives past. Returns the drive, for
 * the worker's own events.
 */
export function driveInBackground(options, { tag = SYNC_TAG, onReport } = {}) {
  const drive = async () => {
    await init();
    const given = await (typeof options === "function" ? options() : options);
    const reports = [];
    for (const one of [].concat(given ?? [])) {
      const client = await WowClient.connect({ ...one, storage: "indexedDB", resume: false });
      try {
        const report = await client.resume();
        // A page that is closing still holds its intents' locks for a moment:
        // what was busy is tried again a few times before the sync gives up.
        for (let round = 0; report.busy.length > 0 && round < BUSY_ROUNDS; round++) {
          await new Promise((r) => setTimeout(r, BUSY_PAUSE_MS));
          const again = await client.resume();
          report.driven.push(...again.driven);
          report.busy = again.busy;
        }
        reports.push({ namespace: client.namespace, user: one.user ?? null, ...report });
      } finally {
        client.free();
      }
    }
    if (onReport) await onReport(reports);
    return reports;
  };
  let running = null;
  const once = () => (running ??= drive().finally(() => { running = null; }));
  // A drive's failure where no sync reports it (a message, `online`, the
  // worker's start): a mistake in the options (a TypeError) is told loudly.
  const told = (e) => { if (e instanceof TypeError) console.error("wow-command-client service worker:", e); };
  self.addEventListener("sync", (event) => {
    if (event.tag !== tag) return;
    event.waitUntil(once().then((reports) => {
      // What is still unresolved (another driver holds it, or its outcome is
      // still not known): a failed sync, so the browser tries again later.
      const left = reports.some((r) => r.busy.length > 0 || r.driven.some((o) => o.status === "unknown"));
      if (left && !event.lastChance) throw new Error("intents are still unresolved; the browser retries this sync");
    }));
  });
  self.addEventListener("message", (event) => {
    if (event.data?.type === tag) event.waitUntil(once().catch(told));
  });
  self.addEventListener("online", () => { once().catch(told); });
  // The worker has just started (an event is on its way to it): what a
  // closed tab left is driven now, not only when a sync comes.
  once().catch(told);
  return once;
}

/**
 * From a page: asks the browser to wake the Service Worker with `tag` once
 * it has a network (Background Sync); where there is no Background Sync
 * (Firefox, Safari), posts `{ type: tag }` to the active worker, which
 * drives at once. Resolves to false where no worker is registered or
 * active; the worker's `online` event and the next page's `resume()` still
 * cover that.
 */
export async function requestBackgroundSync(tag = SYNC_TAG) {
  const registration = await globalThis.navigator?.serviceWorker?.getRegistration?.();
  if (registration?.sync) {
    await registration.sync.register(tag);
    return true;
  }
  const worker = registration?.active;
  if (!worker) return false;
  worker.postMessage({ type: tag });
  return true;
}
