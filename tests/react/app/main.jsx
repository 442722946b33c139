// An app as a React user writes it: React 19, built by Vite, the package's
// `react` entry and the generated command builders (copied in by the test
// from www/generated). `?owner=` names the cart; `?intent=` is the intent the
// page follows after a reload (the sender puts it in the URL once known).
import { StrictMode, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { WowProvider, useCommand, useIntent, useIntents, useWowClient } from "wow-command-client/react";
import { addCartItem } from "./generated/example/cart.js";

const params = new URLSearchParams(location.search);
const owner = params.get("owner");
const events = (window.telemetry = []);
const options = {
  baseUrl: location.origin, namespace: "react-app", timeoutMs: 4000, resume: true,
  retry: { baseMs: 300, maxMs: 600 }, traceContext: true,
  // Telemetry whose listener throws: it must change nothing.
  onEvent: (event) => { events.push(event); throw new Error("a broken telemetry listener"); },
};
// `?journal=N`: a caller's storage adapter that counts its reads, holding N
// settled intents already (what a long-lived app's journal holds).
if (params.get("journal")) {
  const map = new Map();
  const reads = (window.reads = { get: 0, list: 0, listed: 0 });
  for (let i = 0; i < Number(params.get("journal")); i++) {
    const id = `old-${String(i).padStart(6, "0")}`;
    map.set(`wow-intents/react-app/${id}`, JSON.stringify({ schemaVersion: 1, namespace: "react-app", intentId: id, requestId: id,
      aggregate: { resource: "cart", aggregateId: id }, command: { method: "PUT", path: `/cart/${id}/add_cart_item`, body: {},
        create: false, wait: { stage: "PROCESSED", timeoutMs: 4000 } }, fingerprint: "0".repeat(40), state: "succeeded",
      attempts: [], createdAt: 1_700_000_000_000 + i, updatedAt: 1_700_000_000_000 + i, revision: 1 }));
  }
  options.storage = {
    async get(key) { reads.get++; return map.get(key) ?? null; },
    async set(key, value) { map.set(key, value); },
    async delete(key) { map.delete(key); },
    async list(prefix) {
      reads.list++;
      const found = [...map].filter(([key]) => key.startsWith(prefix));
      reads.listed += found.length;
      return found;
    },
    async compareAndSet(key, expected, value) {
      if ((map.has(key) ? JSON.parse(map.get(key)).revision : 0) !== expected) return false;
      map.set(key, value);
      return true;
    },
  };
}

/** Every value `value` takes while rendered, in order, as JSON in `data-seen`. */
function useSeen(value) {
  const seen = useRef([]);
  if (seen.current[seen.current.length - 1] !== value) seen.current.push(value);
  return JSON.stringify(seen.current);
}

function Sender() {
  const { send, state, intentId, error } = useCommand();
  useEffect(() => {
    if (intentId) history.replaceState(null, "", `?owner=${owner}&intent=${intentId}`);
  }, [intentId]);
  const seen = useSeen(state);
  return (
    <section id="sender" data-state={state} data-seen={seen} data-intent={intentId ?? ""}>
      <button id="add" onClick={() => send(addCartItem({ ownerId: owner }, { productId: "p-1", quantity: 1 })).catch(() => {})}>
        Add to cart
      </button>
      <output>{state}</output>
      {error && <p id="error">{String(error.code ?? error)}</p>}
    </section>
  );
}

/** `?scoped=N`: N senders of one cart's scope, each adding its own product, and a withdraw button each. */
function ScopedSender({ n }) {
  const { send, state, intentId, error } = useCommand();
  const { client } = useWowClient();
  const seen = useSeen(state);
  const scope = `cart:${owner}`;
  return (
    <section id={`scoped-${n}`} data-state={state} data-seen={seen} data-intent={intentId ?? ""}
      data-error={error?.code ?? ""}>
      <button id={`add-${n}`} onClick={() => send(addCartItem({ ownerId: owner }, { productId: `p-${n}`, quantity: 1 }, { scope })).catch(() => {})}>
        Add product {n}
      </button>
      <button id={`withdraw-${n}`} onClick={() => client.withdraw(intentId).catch(() => {})}>Withdraw</button>
      <output>{state}</output>
    </section>
  );
}

function Outbox() {
  const all = useIntents();
  const open = useIntents({ states: ["pending", "sending", "unknown", "escalated"] });
  const seen = useSeen(JSON.stringify(all.map((r) => [r.intentId, r.state])));
  return (
    <section id="outbox" data-records={JSON.stringify(all.map((r) => ({ intentId: r.intentId, state: r.state, requestId: r.requestId })))}
      data-seen={seen} data-open={open.length}>
      <p>{open.length} changes not confirmed yet</p>
      <ul>{all.map((r) => <li key={r.intentId}>{r.intentId}: {r.state}</li>)}</ul>
    </section>
  );
}

function Watched({ intent }) {
  const record = useIntent(intent);
  const state = record === undefined ? "reading" : record === null ? "absent" : record.state;
  const seen = useSeen(state);
  return <section id="watched" data-state={state} data-seen={seen} data-request={record?.requestId ?? ""}>{state}</section>;
}

/** `useIntent` pointed at one key, then another (`#switch`): every record rendered, with the key it was rendered for. */
function Switcher({ keys }) {
  const [at, setAt] = useState(0);
  const record = useIntent(keys[at]);
  const shown = useRef([]);
  shown.current.push([keys[at], record === undefined ? "undefined" : record === null ? null : record.intentId]);
  return (
    <section id="switcher" data-shown={JSON.stringify(shown.current)} data-at={at}>
      <button id="switch" onClick={() => setAt((a) => (a + 1) % keys.length)}>Next</button>
    </section>
  );
}

function Ready() {
  const { client, error } = useWowClient();
  return <p id="ready" data-ready={client ? "yes" : error ? String(error) : "no"} />;
}

function App() {
  const [showSender, setShowSender] = useState(true);
  // Who is signed in (`?user=`, none by default); `#sign-in-as` switches to another user, as a sign-in does.
  const [user, setUser] = useState(params.get("user"));
  const intent = params.get("intent");
  return (
    <WowProvider options={options} user={user}>
      <button id="sign-in-as" onClick={() => setUser(params.get("next"))}>Sign in as the next user</button>
      <Ready />
      {showSender && <Sender />}
      <button id="hide" onClick={() => setShowSender(false)}>Hide the sender</button>
      {intent && <Watched intent={intent} />}
      {params.get("switch") && <Switcher keys={params.get("switch").split(",")} />}
      {Array.from({ length: Number(params.get("scoped") ?? 0) }, (_, n) => <ScopedSender key={n} n={n + 1} />)}
      <Outbox />
    </WowProvider>
  );
}

createRoot(document.getElementById("root")).render(<StrictMode><App /></StrictMode>);
