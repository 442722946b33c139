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

function Ready() {
  const { client, error } = useWowClient();
  return <p id="ready" data-ready={client ? "yes" : error ? String(error) : "no"} />;
}

function App() {
  const [showSender, setShowSender] = useState(true);
  const intent = params.get("intent");
  return (
    <WowProvider options={options}>
      <Ready />
      {showSender && <Sender />}
      <button id="hide" onClick={() => setShowSender(false)}>Hide the sender</button>
      {intent && <Watched intent={intent} />}
      <Outbox />
    </WowProvider>
  );
}

createRoot(document.getElementById("root")).render(<StrictMode><App /></StrictMode>);
