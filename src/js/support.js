import { hold, own } from "../web/runtime.js";
import { channelListen } from "../web/executor.js";
import { FREED, holding } from "../web/held.js";

// The JS-side pieces of the API: the typed error class and the result
// stream handle. Kept in plain JS so `instanceof CommandError` works and
// the stream is a real ReadableStream.

export class CommandError extends Error {
  constructor(outcome) {
    const error = outcome.error || {};
    const result = outcome.result || {};
    const code = error.errorCode || result.errorCode || "Unknown";
    super(`${code}: ${error.errorMsg || result.errorMsg || outcome.reason || outcome.status}`);
    this.name = "CommandError";
    this.code = code;
    this.outcome = outcome.status;
    this.appended = outcome.appended ?? null;
    this.stage = result.stage ?? null;
    this.commandId = result.commandId ?? outcome.appendedCommandId ?? null;
    this.requestId = outcome.requestId;
    this.intentId = outcome.intentId;
    this.aggregateId = result.aggregateId ?? null;
    this.aggregateName = result.aggregateName ?? null;
    this.contextName = result.contextName ?? null;
    this.tenantId = result.tenantId ?? null;
    this.aggregateVersion = result.aggregateVersion ?? outcome.appendedVersion ?? null;
    this.errorMsg = error.errorMsg ?? result.errorMsg ?? "";
    this.bindingErrors = error.bindingErrors ?? result.bindingErrors ?? [];
    this.result = result.result ?? {};
    this.commandResult = outcome.result ?? null;
    this.reason = outcome.reason ?? null;
    this.detail = outcome;
  }
}

export function makeCommandError(outcome) {
  return new CommandError(outcome);
}

/**
 * A mistake in a call's arguments (connect's options, a call's options, a
 * decision, a filter): a TypeError naming the call, as a platform API
 * answers a bad argument. No command was judged, so no CommandError.
 */
export const mistake = (call, message) => TypeError(`${call}: ${message}`);

// A command's fields (the command reader's, in crates/core/src/intent_input.rs; the
// first-hour test holds the two lists together): a call option spelt as one
// of them is told where it goes.
const COMMAND_FIELDS = ["aggregate", "action", "method", "path", "body", "intentKey", "scope", "waitStage", "waitContext",
  "waitProcessor", "waitFunction", "waitTailStage", "expectedVersion", "timeoutMs", "waitTimeoutMs", "headers", "create", "idInPath"];

/** Refuses the first own key of `object` (`what` in messages) that is not in `known`. */
export function onlyKnown(call, what, object, known) {
  let keys;
  try { keys = Object.keys(object); } catch { throw mistake(call, `${what} could not be read`); }
  const key = keys.find((k) => !known.includes(k));
  if (key !== undefined) {
    throw mistake(call, `${what}.${key} is not an option (known: ${known.join(", ")})` +
      (COMMAND_FIELDS.includes(key) ? `; \`${key}\` is a field of the command` : ""));
  }
}

// A handle that is both an async iterable and a ReadableStream of results,
// plus `outcome`, a promise of the final Outcome. Read it one way or the
// other: both take the same stream's reader. Its call's end (an abort
// included: the engine ends it with the `Aborted` error) is `finish`; its
// client's holdings `of` being let go end it too (pendingCall).
export function makeResultStream(of) {
  let controller, settle, open = true, forget;
  const stream = new ReadableStream({ start(c) { controller = c; } });
  // Held like every other call's promise (runtime.js): a process waits for the stream's end.
  const outcome = hold(new Promise((resolve) => { settle = resolve; }));
  const handle = {
    stream,
    outcome,
    [Symbol.asyncIterator]() {
      const reader = stream.getReader();
      return {
        next: () => reader.read(),
        return: async () => { await reader.cancel(); return { done: true }; },
      };
    },
  };
  const finish = (finalOutcome, error) => {
    if (!open) return;
    open = false;
    forget();
    settle(finalOutcome);
    if (error) controller.error(error); else controller.close();
  };
  const parts = { handle, push(value) { if (open) controller.enqueue(value); }, finish };
  forget = holding((why) => { const o = ended(why, parts.intentId); finish(o, new CommandError(o)); }, of);
  return parts;
}

// A call's promise and its settlers (`{ promise, resolve, reject }`). When
// the module's instance stops before the call ends (src/web/instance.js),
// or its client is freed (its holdings `of` let go), the call ends then:
// `send` (`outcome`) resolves to the outcome `unknown` coded
// `ModuleRestarted` or `ClientFreed`, every other call rejects with that
// CommandError. The intent (its id is on the call once known) stays in the
// journal: the restarted module drives it again, or whichever client
// resumes it next.
export function pendingCall(outcome, of) {
  const call = {};
  call.promise = new Promise((resolve, reject) => {
    const forget = holding((why) => {
      const o = ended(why, call.intentId);
      if (outcome) resolve(o); else reject(new CommandError(o));
    }, of);
    call.resolve = (v) => { forget(); resolve(v); };
    call.reject = (e) => { forget(); reject(e); };
  });
  return call;
}

// `why`: what stopped the module, as text (instance.js), or FREED.
const ended = (why, intentId) => why === FREED
  ? unknown(intentId ?? "", null, "ClientFreed", "the client was freed (free() or dispose) while this call waited",
    "the intent is kept in the journal; the next client that resumes it (another tab's, a reload's, resume()) drives it again")
  : unknown(intentId ?? "", null, "ModuleRestarted", `the module stopped (${why}) and restarted`,
    "the module stopped while this call waited; the intent is kept in the journal and the restarted module drives it again");

// A call's options: `{ signal, onIntent }` read and checked, or undefined
// without either. A mistake in them throws a TypeError naming `call` (the
// call fails before anything is started); a signal aborted already throws
// the `Aborted` CommandError (nothing written, nothing sent).
// awaitDownstream takes its DownstreamOptions beside the CallOptions.
export function watchFor(options, call) {
  if (options == null) return undefined;
  if (Object(options) !== options) throw mistake(call, "options must be an object");
  onlyKnown(call, "options", options, ["signal", "onIntent", ...(call === "awaitDownstream" ? ["stage", "timeoutMs", "check"] : [])]);
  let signal, aborted, listen, onIntent;
  try {
    signal = own(options, "signal");
    onIntent = own(options, "onIntent");
    if (signal != null) ({ aborted, addEventListener: listen } = signal);
  } catch {
    throw mistake(call, "options.signal could not be read");
  }
  if (onIntent != null && typeof onIntent !== "function") throw mistake(call, "options.onIntent must be a function");
  if (signal != null && (typeof aborted !== "boolean" || typeof listen !== "function")) throw mistake(call, "options.signal must be an AbortSignal");
  if (aborted) throw abortedAlready();
  return signal == null && onIntent == null ? undefined : { signal, onIntent };
}

// A mistake in awaitDownstream's options: `{ stage, timeoutMs, check }`,
// each undefined when not given.
export function downstreamOptions(options) {
  const call = "awaitDownstream";
  let stage, timeoutMs, check;
  try {
    [stage, timeoutMs, check] = ["stage", "timeoutMs", "check"].map((k) => own(options, k));
  } catch { throw mistake(call, "options could not be read"); }
  if (stage != null && !STAGES.includes(stage)) throw mistake(call, `unknown wait stage \`${stage}\`: one of ${STAGES.join(", ")}`);
  if (timeoutMs != null && (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0)) throw mistake(call, "options.timeoutMs must be a non-negative integer");
  if (check != null && typeof check !== "function") throw mistake(call, "options.check must be a function");
  return { stage: stage ?? undefined, timeoutMs: timeoutMs ?? undefined, check: check ?? undefined };
}

// `signOut`'s options: whether to purge, or a TypeError naming the mistake.
export function signOutPurge(options) {
  if (options == null) return false;
  if (Object(options) !== options) throw mistake("signOut", "options must be an object");
  onlyKnown("signOut", "options", options, ["purge"]);
  const purge = own(options, "purge");
  if (purge != null && typeof purge !== "boolean") throw mistake("signOut", "options.purge must be true or false");
  return purge === true;
}

// `promise`, or the `Aborted` CommandError once `signal` aborts
// (requestPersistentStorage: a permission prompt's wait).
export function abortable(promise, signal) {
  if (!signal) return promise;
  return new Promise((resolve, reject) => {
    try { signal.addEventListener("abort", () => reject(abortedAlready()), { once: true }); } catch { /* not abortable */ }
    promise.then(resolve, reject);
  });
}

// The `Aborted` error of a signal aborted before the call began: nothing written, nothing sent.
function abortedAlready() {
  return new CommandError(unknown("", false, "Aborted", "the caller's wait was aborted",
    "aborted before anything was sent; the intent is still driven"));
}

// The outcome `unknown` of a call that ended in this module, with nothing from the server.
function unknown(intentId, appended, errorCode, errorMsg, reason) {
  return { intentId, requestId: "", intentKey: null, attempts: 0, result: null, status: "unknown", appended,
    downstreamPending: null, appendedVersion: null, appendedCommandId: null,
    error: { errorCode, errorMsg, succeeded: false }, reason };
}

const STAGES = ["SENT", "PROCESSED", "SNAPSHOT", "PROJECTED", "EVENT_HANDLED", "SAGA_HANDLED"];

// What an older build's announcement leaves out of a version-1 event: null.
const OLDER = { user: null, intentKey: null, requestId: null, aggregate: null, attempts: null, appended: null, reason: null,
  errorCode: null, at: null, scope: null, waitsFor: null };

// `client.subscribe(listener, filter)`: one event per state change of an
// intent of the namespace, written by this client, another tab or the
// Service Worker (through BroadcastChannel; where there is none, this
// runtime's clients only). The event is the announcement the module wrote
// (crates/core/src/engine/events.rs, `version: 1`), a copy per listener; an
// announcement of an older build carries fewer fields (a build before
// subscribe only intentId, state and revision), the others null. An event
// older than one already delivered for the same intent (a lower revision)
// is dropped. A listener that throws is ignored: it changes nothing for the
// intents or the other listeners. Only `user`'s intents are heard (an
// announcement without a user, as older builds write, is no signed-in user's).
export function subscribeIntents(channelName, listener, filter, user) {
  if (typeof listener !== "function") throw mistake("subscribe", "listener must be a function");
  const want = intentFilter("subscribe", filter);
  const delivered = new Map(); // intentId -> the newest revision delivered
  return channelListen(channelName, (data) => {
    if (!data || typeof data.intentId !== "string" || typeof data.state !== "string") return;
    if ((data.user ?? null) !== user) return;
    const revision = Number.isSafeInteger(data.revision) ? data.revision : 0;
    const { v, ...fields } = data;
    const event = data.version === 1 ? { ...data } : { ...OLDER, ...fields, version: 1, revision };
    if (!want(event)) return;
    if ((delivered.get(event.intentId) ?? -1) >= revision) return;
    delivered.set(event.intentId, revision);
    try { listener(event); } catch { /* the listener's own failure */ }
  });
}

// The filter of `subscribe` (and of the React hook `useIntents`, `call`).
export function intentFilter(call, filter) {
  if (filter == null) return () => true;
  if (Object(filter) !== filter) throw mistake(call, "filter must be an object { intentId?, intentKey?, states? }");
  onlyKnown(call, "filter", filter, ["intentId", "intentKey", "states"]);
  let intentId, intentKey, states;
  try {
    [intentId, intentKey, states] = ["intentId", "intentKey", "states"].map((k) => own(filter, k));
  } catch {
    throw mistake(call, "filter could not be read");
  }
  for (const [name, value] of [["intentId", intentId], ["intentKey", intentKey]]) {
    if (value != null && typeof value !== "string") throw mistake(call, `filter.${name} must be a string`);
  }
  if (states != null && !(Array.isArray(states) && states.every((s) => typeof s === "string"))) {
    throw mistake(call, "filter.states must be an array of intent states");
  }
  return (e) => (intentId == null || e.intentId === intentId) && (intentKey == null || e.intentKey === intentKey)
    && (states == null || states.includes(e.state));
}
