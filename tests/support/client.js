// Helpers for the client tests: drain a result stream, and talk to the
// test gateway's control API and history directly (the independent check).

export async function collect(handle) {
  const elements = [];
  let error = null;
  try {
    for await (const element of handle) elements.push(element);
  } catch (e) {
    error = e;
  }
  return { elements, error, outcome: await handle.outcome };
}

export async function addFault(base, rule) {
  const r = await fetch(`${base}/__gateway/faults`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ rules: [rule] }),
  });
  if (!r.ok) throw new Error(`fault refused: ${r.status}`);
}

export async function storedStreams(base, resource, aggregateId, requestId) {
  const r = await fetch(`${base}/${resource}/event/count`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ operator: "AND", children: [
      { operator: "AGGREGATE_ID", value: aggregateId },
      { field: "requestId", operator: "EQ", value: requestId },
    ] }),
  });
  if (!r.ok) throw new Error(`count failed: ${r.status}`);
  return r.json();
}

export async function firedFor(base, aggregateId) {
  const r = await fetch(`${base}/__gateway/faults`);
  const report = await r.json();
  return report.fired.filter((f) => f.aggregateId === aggregateId).map((f) => f.fault);
}

/** How many requests with `Command-Request-Id: requestId` reached the gateway (its arrivals log, kept before any routing or fault). */
export async function arrivedWith(base, requestId) {
  const r = await fetch(`${base}/__gateway/arrivals?requestId=${encodeURIComponent(requestId)}`);
  return (await r.json()).arrivals.length;
}

export function errorOf(e) {
  return { isCommandError: e && e.name === "CommandError", code: e && e.code, outcome: e && e.outcome,
           appended: e && e.appended, stage: e && e.stage, bindingErrors: e && e.bindingErrors,
           requestId: e && e.requestId, message: e && e.message };
}

export function sleep(ms) { return new Promise((r) => setTimeout(r, ms)); }

/** `headers` that never settles on its first call, then answers `{}`: a hung token refresh. */
export function headersHangingOnce() {
  let calls = 0;
  return () => (calls++ === 0 ? new Promise(() => {}) : {});
}

/** A confirmer that never settles. */
export function confirmNeverSettles() {
  return () => new Promise(() => {});
}

/** A storage adapter whose every operation never settles. */
export function hangingAdapter() {
  const never = () => new Promise(() => {});
  return { get: never, set: never, delete: never, list: never };
}


/** Command bodies that JSON cannot carry or that are beyond the test's limits (4096 chars, depth 8). */
export function hostileBodies() {
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const deep = {};
  let at = deep;
  for (let i = 0; i < 20; i++) at = at.next = {};
  const throwing = { get amount() { throw new Error("getter says no"); } };
  const proxy = new Proxy({}, { ownKeys() { throw new Error("proxy says no"); } });
  return [
    { name: "cycle", body: cyclic, message: "cannot be sent as JSON" },
    { name: "BigInt", body: { amount: 10n }, message: "cannot be sent as JSON" },
    { name: "throwing getter", body: throwing, message: "getter says no" },
    { name: "hostile proxy", body: proxy, message: "proxy says no" },
    { name: "too large", body: { text: "x".repeat(10_000) }, message: "the limit is 4096 (maxBodyChars)" },
    { name: "too deep", body: deep, message: "command.body nests 21 levels deep; the limit is 8 (maxBodyDepth)" },
  ];
}

/** Resolves once the gateway processes nothing (delayed deliveries landed): the condition, not a sleep. */
export async function gatewayIdle(base, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const report = await (await fetch(`${base}/__gateway/faults`)).json();
    if (report.processing === 0) return;
    if (Date.now() > until) throw new Error(`the gateway was still processing after ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** The streams of an aggregate in history, in version order: each one's requestId. */
export async function historyOf(base, resource, aggregateId) {
  const r = await fetch(`${base}/${resource}/event/list`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ condition: { operator: "AGGREGATE_ID", value: aggregateId }, limit: 1000 }),
  });
  if (!r.ok) throw new Error(`list failed: ${r.status}`);
  return (await r.json()).sort((a, b) => a.version - b.version).map((s) => s.requestId);
}

/** A listener for `client.subscribe` that keeps every event in `events`. */
export function eventRecorder() {
  const events = [];
  return { events, listener: (e) => events.push(e) };
}
