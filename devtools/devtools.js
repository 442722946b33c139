// `wow-command-client/devtools`: a panel that shows a client's journal live
// and lets a person act on an intent, through the client's public API only
// (subscribe, intents, intent, history, confirm, withdraw, withdrawScope,
// resume, retry, prune, quarantined). It never holds a lock and never drives
// an intent by itself: each action is a person's click. A failure inside it
// stays inside it (shown in its status line), never thrown into the app.
//
// Framework-free: a custom element (`<wow-devtools>`) whose styles live in
// its shadow root as a constructed style sheet (no inline style, no injected
// <style>, so a strict Content-Security-Policy allows it). Importing this
// module touches no browser API (server rendering imports it safely); the
// element is defined when first mounted.

const STATES = ["pending", "queued", "sending", "unknown", "escalated", "succeeded", "rejected", "conflict", "withdrawn"];
const SETTLED = new Set(["succeeded", "rejected", "conflict", "withdrawn"]);
const ROW = 30; // px, one intent's row in the list
const OVERSCAN = 6;
const SAVED = "wow-command-client/devtools"; // localStorage: { open, position, theme }
const POSITIONS = ["bottom-right", "bottom-left", "top-right", "top-left"];
const THEMES = ["system", "light", "dark"];

const CSS = `
:host { all: initial; position: fixed; z-index: 2147483000; font: 12px/1.4 system-ui, sans-serif; }
:host([data-position="bottom-right"]) { right: 12px; bottom: 12px; }
:host([data-position="bottom-left"]) { left: 12px; bottom: 12px; }
:host([data-position="top-right"]) { right: 12px; top: 12px; }
:host([data-position="top-left"]) { left: 12px; top: 12px; }
.root { display: flex; flex-direction: column; align-items: flex-end; }
:host([data-position^="top"]) .root { flex-direction: column-reverse; }
:host([data-position$="left"]) .root { align-items: flex-start; }
:host([data-position^="top"]) .panel { margin: 8px 0 0; }
.root { --bg: #fff; --fg: #1b1f24; --muted: #5b6470; --line: #d0d7de; --accent: #0a58ca; --hover: #eef2f6; color: var(--fg); }
.root[data-theme="dark"] { --bg: #16191d; --fg: #e6e9ec; --muted: #a3acb6; --line: #39414a; --accent: #7cb1ff; --hover: #232930; }
@media (prefers-color-scheme: dark) { .root[data-theme="system"] { --bg: #16191d; --fg: #e6e9ec; --muted: #a3acb6; --line: #39414a; --accent: #7cb1ff; --hover: #232930; } }
button, input, select { font: inherit; color: inherit; }
button { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: 2px 8px; cursor: pointer; }
button:hover { background: var(--hover); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
.fab { background: #1f2937; color: #fff; border: 0; border-radius: 16px; padding: 6px 12px; font-weight: 600; box-shadow: 0 2px 8px #0004; }
.panel { display: flex; flex-direction: column; width: min(860px, calc(100vw - 24px)); height: min(640px, calc(100vh - 64px));
  background: var(--bg); border: 1px solid var(--line); border-radius: 8px; box-shadow: 0 6px 24px #0005; margin-bottom: 8px; overflow: hidden; }
.panel[hidden] { display: none; }
header, .tools { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; padding: 6px 8px; border-bottom: 1px solid var(--line); }
header h2 { font-size: 13px; margin: 0 auto 0 0; }
.history { color: var(--muted); }
input, select { background: var(--bg); border: 1px solid var(--line); border-radius: 4px; padding: 2px 4px; }
label { display: inline-flex; gap: 4px; align-items: center; color: var(--muted); }
.viewport { flex: 1 1 50%; overflow: auto; position: relative; min-height: 90px; }
.spacer { position: relative; }
.rows { position: absolute; left: 0; right: 0; top: 0; }
.row { display: grid; grid-template-columns: 20px 86px minmax(120px, 2fr) minmax(70px, 1fr) minmax(90px, 1fr) 26px minmax(60px, 1fr) 70px 44px;
  gap: 6px; align-items: center; height: ${ROW}px; padding: 0 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
.row > * { overflow: hidden; text-overflow: ellipsis; }
.row.chosen { background: var(--hover); }
.row .open { border: 0; text-align: left; padding: 0; background: none; color: var(--accent); overflow: hidden; text-overflow: ellipsis; }
.row .id { border: 0; padding: 0; background: none; font-family: ui-monospace, monospace; color: var(--muted); overflow: hidden; text-overflow: ellipsis; }
.badge { display: inline-block; border-radius: 9px; padding: 0 7px; font-size: 11px; font-weight: 600; color: #fff; background: #57606a; }
.badge.pending, .badge.sending { background: #0a58ca; } .badge.queued { background: #6f42c1; }
.badge.unknown { background: #9a6700; } .badge.escalated { background: #bc4c00; } .badge.succeeded { background: #1a7f37; }
.badge.rejected { background: #cf222e; } .badge.conflict { background: #a40e26; } .badge.withdrawn { background: #57606a; }
.muted { color: var(--muted); }
.detail { flex: 1 1 50%; overflow: auto; border-top: 1px solid var(--line); padding: 6px 8px; }
.detail[hidden] { display: none; }
.detail h3 { font-size: 13px; margin: 4px 0; }
.detail dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 4px 0; }
.detail dt { color: var(--muted); } .detail dd { margin: 0; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.detail ol { margin: 4px 0; padding-left: 18px; }
.detail pre { max-height: 200px; overflow: auto; background: var(--hover); padding: 6px; border-radius: 4px; margin: 4px 0; }
.actions { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 6px 0; }
.status { padding: 4px 8px; border-top: 1px solid var(--line); color: var(--muted); min-height: 18px; }
.quarantine { padding: 0 8px 4px; }
.quarantine summary { cursor: pointer; color: var(--muted); }
`;

/** Defines the `<wow-devtools>` element (once; `tag` names it) where custom elements exist. */
export function defineDevtools(tag = "wow-devtools") {
  const registry = globalThis.customElements;
  if (registry && !registry.get(tag)) registry.define(tag, elementClass());
  return tag;
}

/**
 * Mounts the panel for `client` (closed behind its button unless remembered
 * open): `{ element, unmount }`. Where there is no document (server
 * rendering, a worker) it mounts nothing.
 */
export function mountDevtools(client, given = {}) {
  if (typeof document === "undefined" || !globalThis.customElements) return { element: null, unmount() {} };
  // The caller's options, read as its own: never a value some script set on Object.prototype.
  const options = {};
  for (const k of ["tag", "container", "open", "position", "theme", "remember"]) {
    if (given != null && Object.prototype.hasOwnProperty.call(given, k)) options[k] = given[k];
  }
  const element = document.createElement(defineDevtools(options.tag));
  element.attach(client, options);
  (options.container ?? document.body).append(element);
  return { element, unmount: () => element.remove() };
}

/** Diagnostics of `records` for a support ticket: no body unless `bodies`. */
export function diagnostics(records, { bodies = false, namespace = null, now = Date.now() } = {}) {
  return {
    kind: "wow-command-client diagnostics",
    exportedAt: new Date(now).toISOString(),
    namespace,
    bodies,
    intents: records.map((r) => {
      const result = r.lastResult ?? null;
      const out = {
        intentId: r.intentId, intentKey: r.intentKey ?? null, requestId: r.requestId,
        aggregate: r.aggregate, action: actionOf(r), state: r.state, reason: r.reason ?? null,
        appended: r.appended ?? null, appendedVersion: r.appendedVersion ?? null,
        scope: r.scope ?? null, scopeSeq: r.scopeSeq ?? null, waitsFor: r.waitsFor ?? null,
        createdAt: r.createdAt, updatedAt: r.updatedAt, waitStage: r.command?.wait?.stage ?? null,
        commandIds: (r.attempts ?? []).map((a) => a.commandId ?? null),
        attempts: (r.attempts ?? []).map(({ number, sentAt, endedAt, outcome, commandId, waitEndedBy }) =>
          ({ number, sentAt, endedAt: endedAt ?? null, outcome: outcome ?? null, commandId: commandId ?? null, waitEndedBy: waitEndedBy ?? null })),
        lastResult: result && {
          errorCode: result.errorCode, errorMsg: result.errorMsg, stage: result.stage, commandId: result.commandId,
          aggregateVersion: result.aggregateVersion ?? null, signalTime: result.signalTime ?? null,
        },
      };
      if (bodies) out.body = r.command?.body ?? null;
      return out;
    }),
  };
}

const actionOf = (r) => {
  const path = r.command?.path ?? "";
  return path.slice(path.lastIndexOf("/") + 1) || null;
};

const age = (ms) => {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
};
// An attempt's outcome: "succeeded", or `{ failed: code }` / `{ unknown: why }`.
const text = (v) => (v == null ? "?" : typeof v === "string" ? v
  : Object.entries(v).map(([k, why]) => `${k} (${typeof why === "string" ? why : JSON.stringify(why)})`).join(", "));
const time = (ms) => (ms == null ? "—" : new Date(ms).toISOString().replace("T", " ").replace("Z", ""));

// One element of `tag` with `props` (attributes, or `on*` listeners) and children.
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v == null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  el.append(...children.filter((c) => c != null));
  return el;
}

function remembered() {
  try { return JSON.parse(globalThis.localStorage?.getItem(SAVED) ?? "null") ?? {}; } catch { return {}; }
}

function elementClass() {
  return class WowDevtools extends HTMLElement {
    constructor() {
      super();
      this.records = new Map(); // intentId -> record
      this.order = []; // intentIds, newest first
      this.shown = []; // those the filters let through
      this.selected = new Set();
      this.chosen = null;
      this.quarantine = [];
      this.filter = { text: "", state: "", aggregate: "", scope: "" };
      this.changed = new Set();
      this.loaded = false;
      this.live = new Map(); // intentId -> [[at, state, errorCode]]: what this panel heard while mounted
    }

    /** Which client it shows, and its options (position, theme, open). */
    attach(client, options = {}) {
      this.client = client;
      const saved = options.remember === false ? {} : remembered();
      this.settings = {
        open: options.open ?? saved.open ?? false,
        position: POSITIONS.includes(options.position) ? options.position : POSITIONS.includes(saved.position) ? saved.position : "bottom-right",
        theme: THEMES.includes(options.theme) ? options.theme : THEMES.includes(saved.theme) ? saved.theme : "system",
        remember: options.remember !== false,
      };
    }

    connectedCallback() {
      if (!this.client) return;
      if (!this.shadowRoot) {
        const root = this.attachShadow({ mode: "open" });
        try {
          const sheet = new CSSStyleSheet();
          sheet.replaceSync(CSS);
          root.adoptedStyleSheets = [sheet];
        } catch { /* no constructed style sheets: unstyled, never an inline style */ }
        this.build(root);
      }
      this.apply();
      try {
        this.unsubscribe = this.client.subscribe((event) => this.heard(event));
      } catch (e) {
        this.say(`subscribe: ${e?.message ?? e}`);
      }
      if (this.settings.open) this.load();
    }

    disconnectedCallback() {
      try { this.unsubscribe?.(); } catch { /* the client may be freed */ }
      this.unsubscribe = null;
      clearInterval(this.ticking);
    }

    /** The diagnostics of the chosen (or else the shown) intents; bodies only with `bodies`. */
    exportDiagnostics({ bodies = false } = {}) {
      const ids = this.selected.size ? [...this.selected] : this.shown;
      return diagnostics(ids.map((id) => this.records.get(id)).filter(Boolean), { bodies, namespace: this.client?.namespace ?? null });
    }

    // ------------------------------------------------------------ building

    build(root) {
      const s = this.settings;
      this.ui = {};
      const ui = this.ui;
      ui.fab = h("button", { class: "fab", "aria-expanded": "false", "aria-controls": "wow-devtools-panel", onclick: () => this.toggle() }, "Wow intents");
      ui.history = h("span", { class: "history", role: "status" });
      ui.search = h("input", { type: "search", placeholder: "id, key, aggregate, code…", "aria-label": "Search intents", oninput: (e) => this.refilter({ text: e.target.value }) });
      ui.state = h("select", { "aria-label": "Filter by state", onchange: (e) => this.refilter({ state: e.target.value }) },
        h("option", { value: "", text: "every state" }), ...STATES.map((st) => h("option", { value: st, text: st })));
      ui.aggregate = h("input", { type: "text", placeholder: "aggregate", "aria-label": "Filter by aggregate", size: 10, oninput: (e) => this.refilter({ aggregate: e.target.value }) });
      ui.scope = h("input", { type: "text", placeholder: "scope", "aria-label": "Filter by scope", size: 8, oninput: (e) => this.refilter({ scope: e.target.value }) });
      ui.count = h("span", { class: "muted", "aria-live": "polite" });
      ui.theme = h("select", { "aria-label": "Theme", onchange: (e) => this.set({ theme: e.target.value }) }, ...THEMES.map((t) => h("option", { value: t, text: t })));
      ui.position = h("select", { "aria-label": "Position", onchange: (e) => this.set({ position: e.target.value }) }, ...POSITIONS.map((p) => h("option", { value: p, text: p })));
      ui.bodies = h("input", { type: "checkbox", "aria-label": "Include bodies in the export" });
      ui.pruneAsk = h("span", { hidden: true },
        h("span", { class: "ask" }),
        h("button", { onclick: () => this.act("prune", async () => `${await this.client.prune()} settled intents pruned`, () => { ui.pruneAsk.hidden = true; this.load(); }) }, "Prune"),
        h("button", { onclick: () => { ui.pruneAsk.hidden = true; } }, "Keep"));
      ui.viewport = h("div", { class: "viewport", role: "list", "aria-label": "Intents, newest first", onscroll: () => this.draw() });
      ui.spacer = h("div", { class: "spacer" });
      ui.rows = h("div", { class: "rows" });
      ui.spacer.append(ui.rows);
      ui.viewport.append(ui.spacer);
      ui.viewport.addEventListener("keydown", (e) => this.key(e));
      ui.detail = h("section", { class: "detail", "aria-label": "Intent detail", hidden: true });
      ui.quarantine = h("details", { class: "quarantine", hidden: true });
      ui.status = h("div", { class: "status", role: "status", "aria-live": "polite" });
      ui.panel = h("section", { class: "panel", id: "wow-devtools-panel", role: "region", "aria-label": "Wow command client devtools", hidden: true },
        h("header", {}, h("h2", { text: "Intents" }), ui.history,
          h("button", { onclick: () => this.act("resume", async () => { const r = await this.client.resume(); return `resume: ${r.driven.length} driven, ${r.busy.length} busy elsewhere`; }) }, "Resume"),
          h("button", { onclick: () => {
            const settled = [...this.records.values()].filter((r) => SETTLED.has(r.state)).length;
            ui.pruneAsk.querySelector(".ask").textContent = `Prune the settled intents past their retention (${settled} settled now)? `;
            ui.pruneAsk.hidden = false;
          } }, "Prune settled…"), ui.pruneAsk,
          h("button", { onclick: () => this.load() }, "Reload"),
          h("button", { "aria-label": "Close the devtools", onclick: () => this.toggle(false) }, "×")),
        h("div", { class: "tools" }, ui.search, ui.state, ui.aggregate, ui.scope, ui.count,
          h("button", { onclick: () => this.download() }, "Export"), h("label", {}, ui.bodies, "bodies"),
          ui.theme, ui.position),
        ui.viewport, ui.detail, ui.quarantine, ui.status);
      ui.root = h("div", { class: "root" }, ui.panel, ui.fab);
      root.append(ui.root);
    }

    // ------------------------------------------------------------ settings

    apply() {
      const { open, position, theme } = this.settings;
      this.dataset.position = position;
      this.ui.root.dataset.theme = theme;
      this.ui.theme.value = theme;
      this.ui.position.value = position;
      this.ui.panel.hidden = !open;
      this.ui.fab.setAttribute("aria-expanded", String(open));
      clearInterval(this.ticking);
      if (open) this.ticking = setInterval(() => this.draw(), 1000);
      if (this.settings.remember) {
        try { globalThis.localStorage?.setItem(SAVED, JSON.stringify({ open, position, theme })); } catch { /* storage refused */ }
      }
    }

    set(changes) {
      Object.assign(this.settings, changes);
      this.apply();
    }

    toggle(open = !this.settings.open) {
      this.set({ open });
      if (open) this.load(); else this.ui.fab.focus();
    }

    // ------------------------------------------------------------ data

    /** Reads the whole journal once (on opening, or Reload). */
    async load() {
      try {
        const records = await this.client.intents();
        this.records = new Map(records.map((r) => [r.intentId, r]));
        this.order = records.slice().sort((a, b) => b.createdAt - a.createdAt).map((r) => r.intentId);
        this.loaded = true;
        this.refilter();
        // Read once the list is painted (a hidden tab paints nothing: at
        // most 100 ms later): it lists the journal again.
        await new Promise((r) => { requestAnimationFrame(() => setTimeout(r)); setTimeout(r, 100); });
        this.quarantine = await this.client.quarantined();
        this.drawQuarantine();
      } catch (e) {
        this.say(`reading the journal: ${e?.message ?? e}`);
      }
    }

    /** An announcement (this tab, another tab, the Service Worker): that one intent is read again. */
    heard(event) {
      try {
        if (typeof event?.intentId !== "string") return;
        const seen = this.live.get(event.intentId) ?? [];
        if (seen[seen.length - 1]?.[1] !== event.state) seen.push([Date.now(), event.state, event.errorCode ?? null]);
        this.live.set(event.intentId, seen.slice(-50));
        if (this.live.size > 20_000) this.live.delete(this.live.keys().next().value);
        if (!this.loaded || !this.settings.open) return;
        this.changed.add(event.intentId);
        this.flushing ??= Promise.resolve().then(() => this.flush());
      } catch { /* never into the app */ }
    }

    async flush() {
      const ids = [...this.changed];
      this.changed.clear();
      try {
        for (const id of ids) {
          const record = await this.client.intent(id);
          const known = this.records.has(id);
          if (!record) {
            if (known) { this.records.delete(id); this.order = this.order.filter((x) => x !== id); }
            continue;
          }
          this.records.set(id, record);
          if (!known) {
            // Newest first: a new intent goes where its creation puts it (nearly always the top).
            let i = 0;
            while (i < this.order.length && (this.records.get(this.order[i])?.createdAt ?? 0) > record.createdAt) i++;
            this.order.splice(i, 0, id);
          }
        }
        this.refilter();
      } catch (e) {
        this.say(`reading an intent: ${e?.message ?? e}`);
      } finally {
        this.flushing = null;
        if (this.changed.size) this.flushing = Promise.resolve().then(() => this.flush());
      }
    }

    refilter(changes) {
      if (changes) Object.assign(this.filter, changes);
      const { text, state, aggregate, scope } = this.filter;
      const needle = text.trim().toLowerCase();
      const agg = aggregate.trim().toLowerCase();
      const sc = scope.trim();
      this.shown = this.order.filter((id) => {
        const r = this.records.get(id);
        if (!r || (state && r.state !== state) || (sc && !(r.scope ?? "").includes(sc))) return false;
        const a = r.aggregate ?? {};
        if (agg && !`${a.resource}/${a.aggregateId}`.toLowerCase().includes(agg)) return false;
        return !needle || [r.intentId, r.requestId, r.intentKey, a.aggregateId, a.resource, actionOf(r), r.lastResult?.errorCode, r.scope]
          .some((v) => v != null && String(v).toLowerCase().includes(needle));
      });
      this.ui.count.textContent = `${this.shown.length} of ${this.order.length}`;
      this.ui.spacer.style.height = `${this.shown.length * ROW}px`;
      this.draw();
    }

    // ------------------------------------------------------------ drawing

    /** The rows in view (a windowed list: a change draws about a screenful). */
    draw() {
      if (!this.settings.open) return;
      this.drawHistory();
      const ui = this.ui;
      const first = Math.max(0, Math.floor(ui.viewport.scrollTop / ROW) - OVERSCAN);
      const last = Math.min(this.shown.length, Math.ceil((ui.viewport.scrollTop + ui.viewport.clientHeight) / ROW) + OVERSCAN);
      ui.rows.style.transform = `translateY(${first * ROW}px)`;
      const now = Date.now();
      const rows = [];
      for (let i = first; i < last; i++) rows.push(this.row(this.records.get(this.shown[i]), now, i));
      const focused = this.shadowRoot.activeElement?.closest?.(".row")?.dataset.id;
      ui.rows.replaceChildren(...rows);
      if (focused) ui.rows.querySelector(`.row[data-id="${CSS_escape(focused)}"] .open`)?.focus();
      // The detail is drawn again only when its record changed: a redraw
      // would close its body and clear what is typed in it.
      if (this.chosen && this.records.get(this.chosen) !== this.detailOf) this.drawDetail();
    }

    row(r, now, index) {
      const a = r.aggregate ?? {};
      const code = r.lastResult?.errorCode && r.lastResult.errorCode !== "Ok" ? r.lastResult.errorCode : "";
      const row = h("div", { class: `row${r.intentId === this.chosen ? " chosen" : ""}`, role: "listitem", "data-id": r.intentId, "aria-posinset": index + 1, "aria-setsize": this.shown.length },
        h("input", { type: "checkbox", "aria-label": `Select ${r.intentId}`, checked: this.selected.has(r.intentId),
          onchange: (e) => { if (e.target.checked) this.selected.add(r.intentId); else this.selected.delete(r.intentId); } }),
        h("span", { class: `badge ${r.state}`, text: r.state }),
        h("button", { class: "open", title: `${a.resource}/${a.aggregateId}`, onclick: () => this.choose(r.intentId) }, `${a.resource}/${a.aggregateId} · ${actionOf(r) ?? ""}`),
        h("span", { class: "muted", title: r.intentKey ?? "", text: r.intentKey ?? "—" }),
        h("button", { class: "id", title: "Copy the requestId", "aria-label": `Copy requestId ${r.requestId}`, onclick: () => this.copy(r.requestId) }, r.requestId),
        h("span", { title: "attempts", text: String(r.attempts?.length ?? 0) }),
        h("span", { class: "muted", title: r.waitsFor ? `waits for ${r.waitsFor}` : r.scope ?? "", text: r.scope ? `${r.scope}${r.waitsFor ? " ⏳" : ""}` : "—" }),
        h("span", { class: "muted", title: code, text: code || "—" }),
        h("span", { class: "muted", text: age(now - r.createdAt) }));
      return row;
    }

    drawHistory() {
      try {
        const h0 = this.client.history;
        this.ui.history.textContent = h0.available
          ? `history up${h0.waiting ? `, ${h0.waiting} waiting` : ""}`
          : `history down since ${time(h0.since)}, next look ${age(Math.max(0, h0.nextLookAt - Date.now()))}, ${h0.waiting} waiting`;
      } catch (e) {
        this.ui.history.textContent = `history: ${e?.message ?? e}`;
      }
    }

    choose(id) {
      this.chosen = this.chosen === id ? null : id;
      this.detailOf = undefined;
      this.draw();
      this.ui.detail.hidden = !this.chosen;
      if (this.chosen) this.ui.detail.querySelector("h3")?.focus();
    }

    drawDetail() {
      const r = this.records.get(this.chosen);
      this.detailOf = r;
      const d = this.ui.detail;
      if (!r) { d.hidden = true; this.chosen = null; return; }
      const a = r.aggregate ?? {};
      const fields = [["state", r.state], ["intentId", r.intentId], ["requestId", r.requestId], ["intentKey", r.intentKey],
        ["aggregate", `${a.contextAlias ? `${a.contextAlias}.` : ""}${a.resource}/${a.aggregateId}`], ["action", actionOf(r)],
        ["scope", r.scope && `${r.scope} #${r.scopeSeq}${r.waitsFor ? `, waits for ${r.waitsFor}` : ""}`],
        ["wait stage", r.command?.wait?.stage], ["appended", r.appended == null ? null : `${r.appended}${r.appendedVersion != null ? ` (version ${r.appendedVersion})` : ""}`],
        ["reason", r.reason], ["revision", r.revision]];
      const timeline = [h("li", { text: `${time(r.createdAt)} written` })];
      for (const at of r.attempts ?? []) {
        timeline.push(h("li", { text: `${time(at.sentAt)} attempt ${at.number} sent${at.commandId ? ` (commandId ${at.commandId})` : ""}${at.endedAt ? `; ended ${time(at.endedAt)}: ${text(at.outcome)}${at.waitEndedBy ? `, the wait ended by ${at.waitEndedBy}` : ""}` : ""}` }));
      }
      timeline.push(h("li", { text: `${time(r.updatedAt)} last written: ${r.state}` }));
      const heard = (this.live.get(r.intentId) ?? []).map(([at, state, code]) => h("li", { text: `${time(at)} ${state}${code ? ` (${code})` : ""}` }));
      const body = JSON.stringify(r.command?.body ?? null, null, 2);
      const retryVersion = h("input", { type: "number", "aria-label": "Expected version for the retry", size: 6, placeholder: "version" });
      const act = (name, f) => this.act(name, f);
      d.replaceChildren(
        h("h3", { tabindex: "-1", text: `${a.resource}/${a.aggregateId} · ${actionOf(r) ?? ""}` }),
        h("div", { class: "actions" },
          h("button", { onclick: () => act("confirm", async () => `confirm: ${(await this.client.confirm(r.intentId)).status}`) }, "Confirm now"),
          r.state === "queued" || r.state === "pending" ? h("button", { onclick: () => act("withdraw", async () => `withdraw: ${(await this.client.withdraw(r.intentId)).status}`) }, "Withdraw") : null,
          r.state === "queued" && r.scope ? h("button", { onclick: () => act("withdrawScope", async () => `withdrawScope: ${await this.client.withdrawScope(r.scope)} withdrawn`) }, "Withdraw the scope's queued rest") : null,
          r.state === "conflict" ? h("span", {}, retryVersion, h("button", { onclick: () => act("retry", async () => {
            const v = retryVersion.value.trim();
            return `retry: ${(await this.client.retry(r.intentId, { expectedVersion: v === "" ? null : Number(v) })).status}`;
          }) }, "Retry")) : null,
          h("button", { onclick: () => this.copy(r.requestId) }, "Copy requestId"),
          h("button", { "aria-label": "Close the detail", onclick: () => this.choose(r.intentId) }, "Close")),
        h("dl", {}, ...fields.filter(([, v]) => v != null && v !== "").flatMap(([k, v]) => [h("dt", { text: k }), h("dd", { text: String(v) })])),
        h("h3", { text: "Timeline (from the record)" }), h("ol", {}, ...timeline),
        h("h3", { text: "Seen live by this panel (each announced change, from any tab)" }),
        heard.length ? h("ol", {}, ...heard) : h("p", { class: "muted", text: "nothing announced since the panel was mounted" }),
        h("h3", { text: r.lastResult?.errorCode && r.lastResult.errorCode !== "Ok" ? "Error" : "Result" }),
        h("pre", { text: JSON.stringify(r.lastResult ?? null, null, 2) }),
        h("details", {}, h("summary", { text: `Body (${new TextEncoder().encode(body).length} bytes)` }), h("pre", { text: body })));
      d.hidden = false;
    }

    drawQuarantine() {
      const q = this.ui.quarantine;
      q.hidden = this.quarantine.length === 0;
      q.replaceChildren(h("summary", { text: `Quarantined (${this.quarantine.length}): unreadable records, kept apart` }),
        h("ul", {}, ...this.quarantine.map((e) => h("li", { text: `${e.key}: ${e.reason}` }))));
    }

    key(e) {
      if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
      const id = this.shadowRoot.activeElement?.closest?.(".row")?.dataset.id;
      const i = this.shown.indexOf(id);
      if (i < 0) return;
      const next = Math.min(this.shown.length - 1, Math.max(0, i + (e.key === "ArrowDown" ? 1 : -1)));
      e.preventDefault();
      const vp = this.ui.viewport;
      if (next * ROW < vp.scrollTop) vp.scrollTop = next * ROW;
      if ((next + 1) * ROW > vp.scrollTop + vp.clientHeight) vp.scrollTop = (next + 1) * ROW - vp.clientHeight;
      this.draw();
      this.ui.rows.querySelector(`.row[data-id="${CSS_escape(this.shown[next])}"] .open`)?.focus();
    }

    // ------------------------------------------------------------ acting

    /** Runs a person's action; its answer or the SDK's refusal, in its own words, goes to the status line.
     * What it changes is announced and read intent by intent (`heard`); a prune announces nothing, so it reloads. */
    async act(name, f, after) {
      this.say(`${name}…`);
      try {
        this.say(await f());
      } catch (e) {
        this.say(`${name} refused: ${e?.code ? `${e.code}: ` : ""}${e?.message ?? e}`);
      } finally {
        after?.();
      }
    }

    copy(text) {
      Promise.resolve().then(() => navigator.clipboard.writeText(text))
        .then(() => this.say(`copied ${text}`), () => this.say(`copy it by hand: ${text}`));
    }

    download() {
      try {
        const data = this.exportDiagnostics({ bodies: this.ui.bodies.checked });
        const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }));
        const link = h("a", { href: url, download: `wow-diagnostics-${Date.now()}.json` });
        this.shadowRoot.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 10_000);
        this.say(`exported ${data.intents.length} intents${data.bodies ? " with their bodies" : ", bodies left out"}`);
      } catch (e) {
        this.say(`export: ${e?.message ?? e}`);
      }
    }

    say(text) {
      if (this.ui) this.ui.status.textContent = text;
    }
  };
}

const CSS_escape = (s) => (globalThis.CSS?.escape ? globalThis.CSS.escape(s) : String(s).replace(/["\\]/g, "\\$&"));
