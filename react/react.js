// `wow-command-client/react`: a provider that connects one client, and hooks
// that send and observe intents through it. The truth is the journal, not
// the component: an intent outlives the component that sent it (unmounting
// only stops the observation) and the page (after a reload, `useIntent`
// reads the same record and follows it to its end, whoever drives it).
//
// Nothing here touches `window` at import or while rendering: the client is
// connected in an effect, so server rendering returns the initial state.
import {
  createContext, createElement, useCallback, useContext, useEffect, useMemo, useRef, useState, useSyncExternalStore,
} from "react";
import init, { CommandError, WowClient } from "wow-command-client";

const Context = createContext(null);

let initialized; // one module per page, initialized once
const ready = () => (initialized ??= Promise.resolve(init()));

/**
 * Connects when first mounted, as `user` (the signed-in user's id, or null
 * for an app without sign-in; `options.user` when the prop is left out),
 * and again whenever `user` changes: the previous client is freed (its
 * user's intents stay in the journal, driven by nobody until that user
 * connects again), and hooks follow the new one. The other `options` are
 * read when it connects (give the provider a `key` to connect again with
 * new ones). Frees the client when unmounted. `client` instead hands it a
 * client (or a promise of one) the app connected itself; the provider
 * never frees that one.
 */
export function WowProvider({ options, user, client, children }) {
  const [state, setState] = useState({ client: null, error: null });
  const given = useRef();
  given.current = { options, client };
  const who = user !== undefined ? user : ownField(options, "user");
  // What hooks await before the provider has connected: settled by the
  // first connection that is still mounted (under StrictMode the first
  // mount's is freed, the second's is the one); a new one per user.
  const connection = useMemo(() => {
    let settle;
    const promise = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    promise.catch(() => {}); // read through `error` and the hooks' calls
    return { promise, settle };
  }, [who]);
  useEffect(() => {
    let live = true, owned = null;
    const { options: opts, client: theirs } = given.current;
    setState((s) => (s.client === null && s.error === null ? s : { client: null, error: null }));
    const connecting = theirs != null ? Promise.resolve(theirs)
      : ready().then(() => WowClient.connect({ ...opts, user: who })).then((c) => (owned = c));
    connecting.then((c) => {
      if (!live) return owned?.free();
      connection.settle.resolve(c);
      setState({ client: c, error: null });
    }, (thrown) => {
      if (!live) return;
      // An Error always (a `client` promise may reject with anything): the hooks' `error` is typed so.
      const error = thrown instanceof Error ? thrown : Error(String(thrown), { cause: thrown });
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

/** `o[k]` when `o` holds it itself: an option is never read from a prototype. */
const ownField = (o, k) => (o != null && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);

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
const SETTLED = ["succeeded", "rejected", "conflict", "escalated", "withdrawn"];

/**
 * One intent at a time: `send(command, options?)` resolves to the Outcome
 * (as `client.send`), and `state` follows the intent's journal record,
 * (queued →) pending → sending → unknown → succeeded / rejected / conflict /
 * escalated (or withdrawn, never sent), also after the call has returned (another tab, the Service Worker or
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
      ownField(options, "onIntent")?.(id);
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
 * live across tabs, reloads and the Service Worker. `undefined` until the
 * journal has been read, `null` when it has no such intent (or `intent` is
 * null); never the record of another intent than the one asked for.
 */
export function useIntent(intent) {
  const records = useJournal("useIntent");
  return useMemo(() => {
    if (intent == null) return null;
    if (records === undefined) return undefined;
    return records.find((r) => r.intentId === intent || r.requestId === intent || r.intentKey === intent) ?? null;
  }, [records, intent]);
}

/**
 * The journal's records that match `filter` (`intentId`, `intentKey`,
 * `states`, as `client.subscribe`), oldest first, live. `[]` until first
 * read. The same array while nothing in it changed.
 */
export function useIntents(filter) {
  // Read as `client.subscribe` reads its filter: an unknown key is a mistake, not a filter of nothing.
  const unknown = filter == null ? undefined : Object.keys(filter).find((k) => !FILTER_KEYS.includes(k));
  if (unknown !== undefined) throw TypeError(`useIntents: filter.${unknown} is not an option (known: ${FILTER_KEYS.join(", ")})`);
  const { intentId, intentKey, states } = filter ?? {};
  const key = JSON.stringify([intentId ?? null, intentKey ?? null, states ?? null]);
  const records = useJournal("useIntents");
  const last = useRef(EMPTY);
  return useMemo(() => {
    if (records === undefined) return EMPTY;
    const [id, k, s] = JSON.parse(key);
    const picked = records.filter((r) => (id == null || r.intentId === id) && (k == null || r.intentKey === k)
      && (s == null || s.includes(r.state)));
    const same = picked.length === last.current.length && picked.every((r, i) => r === last.current[i]);
    return (last.current = same ? last.current : picked);
  }, [records, key]);
}
const EMPTY = Object.freeze([]);
const FILTER_KEYS = ["intentId", "intentKey", "states"];

/** The provider's journal store, as a snapshot: the records oldest first, or undefined before the first read. */
function useJournal(hook) {
  const { client } = useConnection(hook);
  const store = client ? storeOf(client) : NO_STORE;
  return useSyncExternalStore(store.subscribe, store.snapshot, serverSnapshot);
}
const serverSnapshot = () => undefined;
const NO_STORE = { subscribe: () => () => {}, snapshot: () => undefined };

const stores = new WeakMap(); // client -> its journal store
const storeOf = (client) => {
  let store = stores.get(client);
  if (!store) stores.set(client, (store = journalStore(client)));
  return store;
};

/**
 * A client's journal as the hooks see it, shared by all of them: one
 * `intents()` read seeds it, then each announced change (from this client,
 * another tab or the Service Worker) is one read of that intent
 * (`client.intent(id)`), so a change costs the same few reads however long
 * the journal is. A record that did not change stays the same object, and
 * the list is a new array only when something in it changed. It listens
 * while some hook does, and reads the journal again when one starts after
 * none did.
 */
function journalStore(client) {
  let records; // the snapshot: records oldest first, or undefined until seeded
  let stop = null;
  const listeners = new Set();
  const reading = new Map(); // intentId -> true while read, "again" when changed meanwhile
  const held = []; // events that came while the seed read ran
  const publish = (next) => {
    records = next;
    for (const l of listeners) l();
  };
  const order = (a, b) => a.createdAt - b.createdAt || (a.intentId < b.intentId ? -1 : a.intentId > b.intentId ? 1 : 0);
  const place = (record, id) => {
    const at = records.findIndex((r) => r.intentId === id);
    if (record === null) return at < 0 ? records : records.filter((_, i) => i !== at);
    if (at >= 0) return records[at].revision >= record.revision ? records : records.map((r, i) => (i === at ? record : r));
    return [...records, record].sort(order);
  };
  const read = async (id) => {
    if (reading.has(id)) return void reading.set(id, "again");
    reading.set(id, true);
    try {
      do {
        reading.set(id, true);
        const record = await client.intent(id);
        if (stop && records) {
          const next = place(record, id);
          if (next !== records) publish(next);
        }
      } while (reading.get(id) === "again" && stop);
    } catch {
      // This read failed; the intent's next change reads it again.
    } finally {
      reading.delete(id);
    }
  };
  const changed = (event) => {
    if (!records) return void held.push(event);
    const known = records.find((r) => r.intentId === event.intentId);
    if (!known || known.revision < event.revision) read(event.intentId);
  };
  const start = () => {
    stop = client.subscribe(changed);
    client.intents().then((all) => {
      if (!stop) return;
      publish(all);
      for (const event of held.splice(0)) changed(event);
    }, () => {
      // The journal could not be read: the next hook to start reads it again.
      stop?.();
      stop = null;
    });
  };
  // The last hook gone, the store stops a moment later: a hook that comes
  // back at once (StrictMode mounts twice, a list re-keyed) finds it seeded.
  let idle = null;
  return {
    subscribe(listener) {
      listeners.add(listener);
      clearTimeout(idle);
      if (!stop) start();
      return () => {
        listeners.delete(listener);
        if (listeners.size > 0) return;
        idle = setTimeout(() => {
          if (listeners.size > 0 || !stop) return;
          stop();
          stop = null;
          records = undefined;
          held.length = 0;
        }, 0);
      };
    },
    snapshot: () => records,
  };
}

/**
 * The devtools panel (`wow-command-client/devtools`) for the provider's
 * client (or `client`), loaded when first mounted: render it only in
 * development, or behind a flag, and production downloads none of it.
 * Unmounting removes the panel; it never touches an intent by itself.
 */
export function WowDevtools({ client: given, ...options }) {
  const value = useContext(Context);
  const client = given ?? value?.client ?? null;
  const latest = useRef(options);
  latest.current = options;
  useEffect(() => {
    if (!client) return undefined;
    let mounted = null, gone = false;
    import("wow-command-client/devtools").then(
      ({ mountDevtools }) => { if (!gone) mounted = mountDevtools(client, latest.current); },
      () => {}, // the panel failing to load never reaches the app
    );
    return () => { gone = true; mounted?.unmount(); };
  }, [client]);
  return null;
}
