// A Cloudflare Worker that uses the package as an edge user would: the
// journal in Workers KV through the shipped adapter, commands to the
// gateway named by the GATEWAY binding, and an idempotent consumer.
import { WowClient } from "../../pkg/workerd.js";
import { IdempotentConsumer } from "../../pkg/consumer-workerd.js";
import { durableObjectAdapter, kvAdapter } from "../../pkg/adapters.js";

const json = (value, status = 200) =>
  new Response(JSON.stringify(value), { status, headers: { "Content-Type": "application/json" } });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const storage = kvAdapter(env.JOURNAL);
    const namespace = url.searchParams.get("ns") ?? "edge";
    try {
      if (url.pathname === "/race-do") {
        // Every invocation for one namespace reaches the same Durable Object.
        return env.EFFECTS.get(env.EFFECTS.idFromName(namespace)).fetch(request);
      }
      if (url.pathname === "/consume-strict") {
        // The same KV store without accepting duplicate effects.
        await IdempotentConsumer.open({ storage, namespace });
        return json({ opened: true });
      }
      if (url.pathname === "/consume") {
        // Deliver one identity; the effect posts a command whose requestId
        // is the identity (the external system's idempotency key).
        const { identity, aggregateId } = await request.json();
        // Workers KV can neither compare-and-swap nor lock: effects are at least once here.
        const consumer = await IdempotentConsumer.open({ storage, namespace, leaseMs: 2000, allowDuplicateEffects: true });
        const outcome = await consumer.handle(identity, async (key) => {
          const r = await fetch(`${env.GATEWAY}/account/${aggregateId}/lock_amount`, {
            method: "PUT",
            headers: { "Content-Type": "application/json", "Command-Request-Id": key, "Command-Wait-Stage": "PROCESSED" },
            body: JSON.stringify({ amount: 1 }),
          });
          return { status: r.status };
        });
        return json(outcome);
      }
      const client = await WowClient.connect({ user: null, baseUrl: env.GATEWAY, storage, namespace, timeoutMs: 15_000 });
      switch (url.pathname) {
        case "/send":
          return json(await Promise.all((await request.json()).map((c) => client.send(c))));
        case "/intents":
          return json(await client.intents());
        case "/subscribe": {
          // workerd has no BroadcastChannel: a subscriber hears this runtime's clients.
          const events = [];
          const stop = client.subscribe((e) => events.push([e.intentId, e.state, e.attempts]));
          const outcome = await client.send(await request.json());
          await new Promise((r) => setTimeout(r, 0));
          stop();
          return json({ outcome, events, broadcastChannel: typeof BroadcastChannel !== "undefined" });
        }
        case "/resume":
          return json(await client.resume());
        default:
          return json({ error: "not found" }, 404);
      }
    } catch (e) {
      return json({ error: String(e), code: e.code ?? null }, 500);
    }
  },
};

/**
 * A Durable Object whose storage backs idempotent consumers: each request
 * opens its own consumer (its own owner, as separate invocations would) and
 * delivers one identity; the effect counts its runs in the object's storage.
 */
export class EffectsObject {
  constructor(state) { this.storage = state.storage; }
  async fetch(request) {
    const { identity } = await request.json();
    const consumer = await IdempotentConsumer.open({ storage: durableObjectAdapter(this.storage), namespace: "do", leaseMs: 10_000 });
    try {
      const outcome = await consumer.handle(identity, async (key) => {
        await this.storage.put(`runs:${key}`, ((await this.storage.get(`runs:${key}`)) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 150));
        return { ran: true };
      });
      return json({ status: outcome.status, runs: await this.storage.get(`runs:${identity}`) });
    } catch (e) {
      return json({ error: String(e), code: e.code ?? null }, 500);
    }
  }
}
