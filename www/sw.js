// The demo's Service Worker: finishes the intents a closed tab left in the
// journal (when it starts, on Background Sync, on a page's message, on
// `online`), and keeps its last report that finished something where the
// next page shows it.
import { driveInBackground } from "/pkg/service-worker.js";
import { wowVersion } from "/generated/index.js";

const params = new URL(self.location.href).searchParams;
const namespace = params.get("ns") || "demo";
// The user the page registered it for: it drives that user's intents only.
const user = params.get("user") || "demo-user";

driveInBackground(() => ({ baseUrl: self.location.origin, wow: wowVersion, namespace, user, timeoutMs: 3000 }), {
  onReport: async (reports) => {
    // It drives at every wake-up; only a drive that finished something is kept.
    if (!reports.some((r) => r.driven.length > 0)) return;
    const cache = await caches.open("wow-demo");
    await cache.put("/__worker-report", new Response(JSON.stringify({ at: Date.now(), reports })));
  },
});
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
