// `wow-command-client/react`: a provider that connects one client, and hooks
// that send and observe intents through it. The truth is the journal, not
// the component: an intent outlives the component that sent it (unmounting
// only stops the observation) and the page (after a reload, `useIntent`
// reads the same record and follows it to its end, whoever drives it).
//
// Nothing here touches `window` at import or while rendering: the client is
// connected in an effect, so server rendering returns the initial state.
import { createContext, createElement, useCallback, useContext, useEffect, useMemo, useRef, useState } from "react";
import init, { CommandError, WowClient } from "wow-command-client";

const Context = createContext(null);

let initialized; // one module per page, initialized once
const ready = () => (initialized ??= Promise.resolve(init()));

/**
 * Connects once, when first mounted (`options` are read then: give the
 * provider a `key` to connect again with new ones), and frees the client
 * when unmounted. `client` instead hands it a client (or a promise of one)
 * the app connected itself; the provider never frees that one.
 */
export function WowProvider({ options, client, children }) {
  const [state, setState] = useState({ client: null, error: null });
  const given = useRef({ options, client });
  // What hooks await before the provider has connected: settled by the
  // first connection that is still mounted (under StrictMode the first
  // mount's is freed, the second's is the one).
  const connection = useMemo(() => {
    let settle;
    const promise = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    promise.catch(() => {}); // read through `error` and the hooks' calls
    return { promise, settle };
  }, []);
  useEffect(() => {
    let live = true, owned = null;
    const { options: opts, client: theirs } = given.current;
    const connecting = theirs != null ? Promise.resolve(theirs)
      : ready().then(() => WowClient.connect(opts)).then((c) => (owned = c));
    connecting.then((c) => {
      if (!live) return owned?.free();
      connection.settle.resolve(c);
      setState({ client: c, error: null });
    }, (error) => {
      if (!live) return;
      connection.settle.reject(error);
      setState({ client: null, error });
    });
    return () => {
      live = false;
      owned?.free();
    };
  }, [connection]);
  const value = useMemo(() => ({ ...state, connection: connection.promise }), [state, connection]);
  return createElement(Context.Provider, { value }, children);
}

function useConnection(hook) {
  const value = useContext(Context);
  if (value == null) throw new Error(`${hook}() must be used inside <WowProvider>`);
  return value;
}

/** `{ client, error }`: the provider's client once connected (null before), or why it could not connect. */
export function useWowClient() {
  const { client, error } = useConnection("useWowClient");
  return { client, error };
}

const IDLE = { state: "idle", intentId: null, outcome: null, error: null, event: null };
const SETTLED = ["succeeded", "rejected", "conflict", "escalated"];

/**
 * One intent at a time: `send(command, options?)` resolves to the Outcome
 * (as `client.send`), and `state` follows the intent's journal record,
 * pending → sending → unknown → succeeded / rejected / conflict / escalated,
 * also after the call has returned (another tab, the Service Worker or
 * `resume()` may finish it). A new `send` starts following the new intent;
 * unmounting stops following and never withdraws the intent.
 */
export function useCommand() {
  const { connection } = useConnection("useCommand");
  const [view, setView] = useState(IDLE);
  const current = useRef({ stop: null, call: 0 });
  useEffect(() => () => { current.current.stop?.(); current.current.stop = null; current.current.call++; }, []);

  const send = useCallback(async (command, options) => {
    const mine = current.current;
    mine.stop?.();
    mine.stop = null;
    const call = ++mine.call;
    const live = () => mine.call === call;
    const update = (f) => { if (live()) setView(f); };
    update(() => ({ ...IDLE, state: "pending" }));
    let client;
    try {
      client = await connection;
    } catch (error) {
      update((v) => ({ ...v, state: "failed", error }));
      throw error;
    }
    // Events are told before this call learns its intent's id: keep them
    // until then, and follow only that intent afterwards.
    let intentId = null;
    const early = [];
    const apply = (event) => update((v) => (v.event && v.event.revision >= event.revision ? v
      : { ...v, intentId: event.intentId, state: event.state, event, error: event.state === "succeeded" ? null : v.error }));
    if (live()) {
      mine.stop = client.subscribe((event) => {
        if (intentId === null) early.push(event);
        else if (event.intentId === intentId) apply(event);
      });
    }
    const onIntent = (id) => {
      intentId = id;
      update((v) => ({ ...v, intentId: id }));
      for (const event of early.splice(0)) if (event.intentId === id) apply(event);
      options?.onIntent?.(id);
    };
    try {
      const outcome = await client.send(command, { ...options, onIntent });
      // The outcome is the newest word unless an event has moved past it
      // (another driver finished the intent meanwhile).
      update((v) => {
        const state = v.event && SETTLED.includes(v.event.state) ? v.event.state : outcome.status;
        return { ...v, intentId: outcome.intentId, outcome, state,
          error: state === "succeeded" ? null : new CommandError(outcome) };
      });
      return outcome;
    } catch (error) {
      update((v) => ({ ...v, state: v.intentId ? v.state : "failed", error }));
      throw error;
    }
  }, [connection]);

  const reset = useCallback(() => {
    current.current.stop?.();
    current.current.stop = null;
    current.current.call++;
    setView(IDLE);
  }, []);
  return { send, reset, state: view.state, intentId: view.intentId, outcome: view.outcome, error: view.error };
}

/**
 * The journal's record of one intent (by intentId, requestId or intentKey),
 * live: read when mounted and again on each of its state changes, from any
 * tab or the Service Worker. `undefined` until first read, `null` when the
 * journal has no such intent (or `intent` is null).
 */
export function useIntent(intent) {
  const match = useMemo(() => (intent == null ? null
    : (r) => r.intentId === intent || r.requestId === intent || r.intentKey === intent), [intent]);
  const records = useJournal("useIntent", match, match);
  return match == null ? null : records === undefined ? undefined : records[0] ?? null;
}

/**
 * The journal's records that match `filter` (`intentId`, `intentKey`,
 * `states`, as `client.subscribe`), oldest first, live. `[]` until first read.
 */
export function useIntents(filter) {
  const { intentId, intentKey, states } = filter ?? {};
  const key = JSON.stringify([intentId ?? null, intentKey ?? null, states ?? null]);
  const match = useMemo(() => {
    const [id, k, s] = JSON.parse(key);
    return (r) => (id == null || r.intentId === id) && (k == null || r.intentKey === k) && (s == null || s.includes(r.state));
  }, [key]);
  // A record may leave the list (its state changed): any change reads again.
  return useJournal("useIntents", match, null) ?? EMPTY;
}
const EMPTY = Object.freeze([]);

/**
 * The records `match` picks, read from the journal when the client is
 * there and again after each state change `relevant` lets through (all
 * when null). One read at a time: changes that arrive during a read are
 * covered by one more read after it.
 */
function useJournal(hook, match, relevant) {
  const { client } = useConnection(hook);
  const [records, setRecords] = useState(undefined);
  useEffect(() => {
    if (!client || !match) return undefined;
    setRecords(undefined); // not another intent's record while the first read runs
    let live = true, reading = false, again = false;
    const read = async () => {
      if (reading) { again = true; return; }
      reading = true;
      try {
        do {
          again = false;
          const all = await client.intents();
          if (live) setRecords(all.filter(match));
        } while (again && live);
      } catch {
        // The journal could not be read now; the next change reads again.
      } finally {
        reading = false;
      }
    };
    const stop = client.subscribe((event) => { if (!relevant || relevant(event)) read(); });
    read();
    return () => { live = false; stop(); };
  }, [client, match, relevant]);
  return records;
}
