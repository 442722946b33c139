// The demo's Service Worker: finishes the intents a closed tab left in the
// journal (Background Sync, and the `online` event), and keeps its last
// report where the next page shows it.
import { driveInBackground } from "/pkg/service-worker.js";

const namespace = new URL(self.location.href).searchParams.get("ns") || "demo";

driveInBackground(() => ({ baseUrl: self.location.origin, namespace, timeoutMs: 3000 }), {
  onReport: async (reports) => {
    const cache = await caches.open("wow-demo");
    await cache.put("/__worker-report", new Response(JSON.stringify({ at: Date.now(), reports })));
  },
});
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
