// The demo: a small accounts app on the test gateway, using the package
// exactly as a user would. Every text goes through textContent (escaped).
import init, { WowClient, CommandError } from "/pkg/index.js";
import { requestBackgroundSync } from "/pkg/service-worker.js";
// The commands, generated from the gateway's OpenAPI document (scripts/generate-demo.sh).
import { createAccount, lockAmount, prepare } from "/generated/transfer/account.js";
// The Wow version the gateway's document states: history is asked in the query shape it reads.
import { wowVersion } from "/generated/index.js";

const params = new URLSearchParams(location.search);
const namespace = params.get("ns") || "demo";
// Who is signed in (`?user=`, "demo-user" by default): every intent is
// recorded with it, and only this user's are listed, sent and resumed here.
const user = params.get("user") || "demo-user";
// `?noworker`: no Service Worker (the tests of one page's own drives).
const worker = !params.has("noworker");
// `?trace`: the last 300 lifecycle and history events in `demo.events`, for
// a test to show what a page was doing when something did not settle.
const events = [];
const restarts = []; // each restart of the module (onRestart)
const trace = params.has("trace") ? (e) => { events.push(e); if (events.length > 300) events.shift(); } : null;
const $ = (id) => document.getElementById(id);
const status = (text) => { $("status").textContent = text; };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("data-")) node.setAttribute(k, v); else node[k] = v;
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child ?? "")));
  return node;
}

await init();
// The history probe's state (`client.history`), redrawn on its telemetry and every second.
const probe = () => showProbe();
const client = await WowClient.connect({
  user,
  baseUrl: location.origin,
  wow: wowVersion,
  storage: "indexedDB",
  namespace,
  timeoutMs: Number(params.get("timeout") || 3000),
  retry: { baseMs: 200, maxConfirms: 3 },
  persistStorage: true,
  onHistory: (e) => { trace?.(e); probe(); },
  // The module stopped (a trap) and this client moved to a fresh instance.
  onRestart: (e) => { restarts.push(e); trace?.(e); },
  ...(trace ? { onEvent: trace } : {}),
});
// The devtools panel (`wow-command-client/devtools`): every intent of this
// journal, live, behind the button at the bottom right. Loaded on its own
// after the page is up; a page without it works the same (`?devtools=0`).
if (params.get("devtools") !== "0") {
  import("/pkg/devtools.js").then(({ mountDevtools }) => mountDevtools(client)).catch(() => {});
}
// Asked at connect, never awaited: Firefox answers only when the user
// answers its prompt, and nothing here waits for that.
$("persistence").textContent = "Asked the browser to keep this site's storage…";
client.persistence.then((kept) => {
  $("persistence").textContent = kept === null ? "This browser cannot keep storage persistent."
    : kept ? "Storage is persistent: the browser will not evict the journal."
      : "Storage is best-effort: the browser may evict the journal under pressure.";
});

// Every intent's state changes, from this page, other tabs and the Service
// Worker (client.subscribe).
const history = new Map(); // intentId → [state, …]
const cards = new Map();   // intentId → card
client.subscribe((event) => {
  const states = history.get(event.intentId) || [];
  if (states[states.length - 1] !== event.state) states.push(event.state);
  history.set(event.intentId, states);
  cards.get(event.intentId)?.renderStates();
  scheduleRefresh();
});

// ------------------------------------------------------------------ cards

function newCard(title) {
  const timeline = el("ol", { class: "timeline", "data-testid": "timeline" });
  const states = el("p", { class: "muted", "data-testid": "states" });
  const outcome = el("p", { "data-testid": "outcome" }, "in flight…");
  const ids = el("p", { class: "mono", "data-testid": "ids" });
  const node = el("li", { class: "card", "data-testid": "card" }, el("h3", {}, title), ids, timeline, states, outcome);
  $("cards").prepend(node);
  const card = {
    node,
    intentId: null,
    know(requestId, intentKey, attempts) {
      if (requestId && !this.intentId) { this.intentId = requestId; cards.set(requestId, this); }
      node.dataset.requestId = requestId || "";
      ids.textContent = `requestId ${requestId || "…"} · intent key ${intentKey || "—"}` +
        (attempts != null ? ` · attempts ${attempts}` : "");
      this.renderStates();
    },
    stage(element) {
      const ok = element.succeeded !== false && (element.errorCode ?? "Ok") === "Ok";
      timeline.append(el("li", { class: ok ? "ok" : "bad", "data-stage": element.stage || element.errorCode },
        element.stage || element.errorCode, ok ? "" : " ✗"));
      if (element.requestId) this.know(element.requestId, null, null);
    },
    renderStates() {
      const list = this.intentId ? history.get(this.intentId) : null;
      if (list) states.textContent = `journal: ${list.join(" → ")}`;
    },
    done(o) {
      node.dataset.status = o.status;
      this.know(o.requestId, o.intentKey, o.attempts);
      const parts = [o.status];
      if (o.appended !== null) parts.push(o.appended ? "appended" : "not appended");
      if (o.error) parts.push(`${o.error.errorCode}${o.error.errorMsg ? `: ${o.error.errorMsg}` : ""}`);
      if (o.downstreamPending) parts.push(`${o.downstreamPending} not observed`);
      if (o.reason) parts.push(o.reason);
      outcome.textContent = parts.join(" · ");
      scheduleRefresh();
    },
  };
  return card;
}

function mode() {
  return document.querySelector("input[name=mode]:checked").value;
}

/** Runs one command, built inside the try: a route value the builder refuses shows on the card. */
async function run(title, build) {
  const card = newCard(title);
  try {
    const command = build();
    // Should this tab close mid-flight, the Service Worker finishes the intent.
    if (worker) requestBackgroundSync().catch(() => {});
    if (mode() === "stream") {
      const handle = client.sendAndWaitStream(command);
      for await (const element of handle.stream.values ? handle.stream.values() : handle) card.stage(element);
      card.done(await handle.outcome);
    } else {
      card.done(await client.send(command));
    }
  } catch (e) {
    if (e instanceof CommandError) card.done(e.detail); else card.done({ status: "rejected", appended: null, error: { errorCode: e.name, errorMsg: e.message } });
  }
  await refreshAccounts();
}

// --------------------------------------------------------------- actions

const unique = () => crypto.randomUUID().slice(0, 8);

$("open-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const form = new FormData(ev.target);
  const id = `${form.get("name")}-${unique()}`;
  run(`Open account ${id}`, () => createAccount({ id },
    { name: String(form.get("name")), balance: Number(form.get("balance")) },
    { intentKey: `open:${id}`, waitStage: "SNAPSHOT" }));
});

$("lock-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const form = new FormData(ev.target);
  run(`Lock ${form.get("amount")} on ${form.get("account")}`, () => lockAmount({ id: String(form.get("account")) },
    { amount: Number(form.get("amount")) }, { intentKey: `lock:${unique()}`, waitStage: "SNAPSHOT" }));
});

// Two locks fired in a row at one account, in one scope: the second is sent
// only once the first has settled, whatever happens to the first's answer.
const scopeOf = () => `account:${$("lock-form").elements.account.value}`;
async function lockTwiceInScope(fault) {
  const id = $("lock-form").elements.account.value;
  if (!id) return;
  await faults("POST", { rules: [{ match: { aggregateId: id }, times: 1, ...fault }] });
  const scope = scopeOf();
  for (const amount of [1, 2]) {
    run(`Lock ${amount} on ${id} (scope ${scope})`, () => lockAmount({ id }, { amount }, { scope, waitStage: "SNAPSHOT" }));
  }
}
$("scoped").addEventListener("click", () => lockTwiceInScope({ fault: "drop_response_after_append" }));
$("scoped-slow").addEventListener("click", () => lockTwiceInScope({ fault: "delay", delayMs: 3000 }));
$("withdraw-scope").addEventListener("click", async () => {
  const n = await client.withdrawScope(scopeOf());
  $("armed").textContent = `${n} queued command(s) of ${scopeOf()} withdrawn: none of them was sent`;
});

$("transfer-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const form = new FormData(ev.target);
  run(`Transfer ${form.get("amount")} from ${form.get("from")} to ${form.get("to")}`, () => prepare({ id: String(form.get("from")) },
    { to: String(form.get("to")), amount: Number(form.get("amount")) },
    { intentKey: `transfer:${unique()}`, waitStage: "SAGA_HANDLED", waitProcessor: "TransferSaga", waitTailStage: "PROCESSED" }));
});

// ----------------------------------------------------------------- faults

async function faults(method, body) {
  const r = await fetch("/__gateway/faults", {
    method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`fault control answered ${r.status}`);
}

$("arm").addEventListener("click", async () => {
  const [fault, stage] = $("fault").value.split(":");
  const rule = { match: { path: "/account*" }, fault, times: 1 };
  if (stage) rule.stage = stage;
  if (fault === "delay") rule.delayMs = 6000;
  if (fault === "query_unavailable") rule.times = 20;
  await faults("POST", { rules: [rule] });
  $("armed").textContent = `armed: ${$("fault").selectedOptions[0].textContent}`;
});

$("chaos").addEventListener("click", async () => {
  const rate = 0.25;
  await faults("POST", { random: { seed: 7, rates: {
    drop_response_after_append: rate, drop_request: rate, unavailable: rate, cut_stream_after: rate, delay: 0.05 } } });
  $("armed").textContent = "armed: random chaos, seed 7";
});

// The event history unavailable for a while (`?historyDownMs=`, default 30 s), and the next
// command's answer lost: its intent waits on the probe, with every other that needs history.
$("history-down").addEventListener("click", async () => {
  const forMs = Number(params.get("historyDownMs") || 30_000);
  await faults("POST", { rules: [{ match: { method: "POST", path: "*/event/*" }, fault: "query_unavailable", forMs },
    { match: { path: "/account*" }, fault: "drop_response_after_append", times: 1 }] });
  $("armed").textContent = `armed: history down for ${forMs / 1000} s, and the next answer lost`;
});

function showProbe() {
  const h = client.history;
  const at = (ms) => new Date(ms).toLocaleTimeString();
  $("probe").dataset.available = String(h.available);
  $("probe").textContent = h.available ? "History answers." : `History unavailable since ${at(h.since)}; the probe looks again at ${at(h.nextLookAt)}` +
    ` (${h.failures} failed ${h.failures === 1 ? "look" : "looks"} in a row; ${h.waiting} waiting here).`;
}
showProbe();
setInterval(showProbe, 1000);

$("clear-faults").addEventListener("click", async () => {
  await faults("DELETE");
  $("armed").textContent = "faults cleared";
});

$("reload").addEventListener("click", () => location.reload());

// ------------------------------------------------------ journal, history

let refreshTimer = null;
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => { refreshJournal(); refreshHistory(); }, 100);
}

async function refreshJournal() {
  const onlyOpen = $("only-open").checked;
  const rows = (await client.intents()).filter((r) => !onlyOpen || ["pending", "sending", "unknown", "escalated"].includes(r.state));
  $("journal").replaceChildren(...rows.reverse().map((r) => {
    const confirm = el("button", { type: "button", "data-testid": "confirm" }, "Confirm");
    confirm.addEventListener("click", async () => {
      confirm.disabled = true;
      const o = await client.confirm(r.intentId);
      status(`confirmed ${r.requestId}: ${o.status}${o.appended === null ? "" : o.appended ? ", appended" : ", not appended"}`);
      scheduleRefresh();
    });
    const settled = ["succeeded", "rejected", "conflict"].includes(r.state);
    return el("tr", { "data-state": r.state, "data-request-id": r.requestId },
      el("td", { class: "mono" }, r.requestId), el("td", { class: "mono" }, r.intentKey || "—"),
      el("td", {}, r.state), el("td", {}, r.attempts.length), el("td", {}, r.reason || ""),
      el("td", {}, settled ? "" : confirm));
  }));
}

async function refreshAccounts() {
  const records = await client.intents();
  const ids = [...new Set(records.filter((r) => r.command.create && r.state === "succeeded").map((r) => r.aggregate.aggregateId))];
  for (const select of document.querySelectorAll("select[name=account], select[name=from], select[name=to], #history-account")) {
    const keep = select.value;
    select.replaceChildren(...ids.map((id) => el("option", { value: id }, id)));
    if (ids.includes(keep)) select.value = keep;
  }
  if (document.querySelector("select[name=to]").options.length > 1 && document.querySelector("select[name=to]").selectedIndex === 0) {
    document.querySelector("select[name=to]").selectedIndex = 1;
  }
  refreshHistory();
}

async function refreshHistory() {
  const id = $("history-account").value;
  if (!id) return;
  const r = await fetch(`/account/${encodeURIComponent(id)}/event/1/1000`);
  const streams = r.ok ? await r.json() : [];
  $("history").replaceChildren(...streams.map((s) => el("tr", { "data-request-id": s.requestId },
    el("td", {}, s.version), el("td", { class: "mono" }, s.requestId), el("td", { class: "mono" }, s.commandId),
    el("td", {}, s.body.map((e) => e.name).join(", ")))));
}

$("only-open").addEventListener("change", refreshJournal);
$("history-account").addEventListener("change", refreshHistory);

// ----------------------------------------------------------- after a load

window.demo = { client, resume: () => client.resume(), namespace, user, events, restarts };
// The Service Worker (www/sw.js) drives what a closed tab left unresolved;
// what it last finished is shown here.
if (worker) {
  await navigator.serviceWorker?.register(`/sw.js?ns=${encodeURIComponent(namespace)}&user=${encodeURIComponent(user)}`, { type: "module" })
    .catch((e) => console.warn("no Service Worker:", e));
  // Wakes the worker for what a closed tab left: a sync where the browser
  // has Background Sync, a message to it where it has not.
  await requestBackgroundSync().catch(() => false);
}
const workerReport = await (await globalThis.caches?.match("/__worker-report"))?.json().catch(() => null);
if (workerReport) {
  const finished = workerReport.reports.flatMap((r) => r.namespace === namespace && r.user === user ? r.driven : []);
  $("worker").textContent = `The Service Worker finished ${finished.length} ${finished.length === 1 ? "intent" : "intents"} while no page drove them` +
    (finished.length ? `: ${finished.map((o) => `${o.requestId.slice(0, 8)}… ${o.status}`).join(", ")}` : "") +
    ` (${new Date(workerReport.at).toLocaleTimeString()}).`;
}
await refreshAccounts();
await refreshJournal();
if (!params.has("noresume")) {
  status("resuming unresolved intents…");
  const report = await client.resume();
  for (const o of report.driven) {
    const card = newCard("Resumed after a reload");
    card.done(o);
  }
  status(`ready · namespace ${namespace} · resumed ${report.driven.length}` + (report.busy.length ? ` · ${report.busy.length} driven by another tab` : ""));
  await refreshAccounts();
} else {
  status(`ready · namespace ${namespace}`);
}
document.body.dataset.ready = "true";
