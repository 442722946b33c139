// A property-based fuzz of the package's JS boundary (fast-check), the same
// in Node.js and in Chromium: every public call, given hostile values where
// it expects objects, strings or numbers, and callbacks that throw, reject,
// answer garbage or never settle, must settle within a bound, resolving or
// rejecting with the package's own typed error (a real Error with a string
// `code`), with no uncaught exception or unhandled rejection; and afterwards
// the same client and consumer still work, and the journal holds nothing
// that `resume()` cannot settle.
//
//   fuzzBoundary({ sdk, fc, base, runs, seed, storage, print, escapes })
// `sdk`: { WowClient, CommandError, IdempotentConsumer, EffectError, memoryAdapter };
// `escapes()`: the uncaught errors and unhandled rejections seen so far.

/**
 * A value made when the case runs, not when it is generated: proxies that
 * throw (and values too big to print) would trip the generator itself.
 */
class Fresh {
  constructor(name, make) { this.name = name; this.make = make; }
  toString() { return `Fresh(${this.name})`; }
}
Fresh.prototype[Symbol.for("fast-check/toStringMethod")] = function () { return `Fresh(${this.name})`; };
const materialise = (v) => (v instanceof Fresh ? v.make() : v);

/** Values that a caller could hand in by mistake or on purpose. */
export function hostileValues(fc) {
  const fresh = {
    throwingGetters: () => {
      const o = {};
      for (const k of ["aggregate", "resource", "id", "action", "body", "baseUrl", "storage", "then", "toJSON", "get", "set"]) {
        Object.defineProperty(o, k, { enumerable: true, get() { throw new Error(`getter ${k} throws`); } });
      }
      return o;
    },
    throwingProxy: () => new Proxy({}, {
      get() { throw new Error("proxy get"); }, has() { throw new Error("proxy has"); },
      ownKeys() { throw new Error("proxy ownKeys"); }, getOwnPropertyDescriptor() { throw new Error("proxy gopd"); },
      getPrototypeOf() { throw new Error("proxy proto"); },
    }),
    revokedProxy: () => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; },
    cycle: () => { const o = { a: 1 }; o.self = o; return o; },
    deep: () => { let o = {}; for (let i = 0; i < 5_000; i++) o = { o }; return o; },
    deepArray: () => { let a = []; for (let i = 0; i < 5_000; i++) a = [a]; return a; },
    large: () => ({ text: "x".repeat(1_100_000) }),
    protoKey: () => JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}'),
    frozen: () => Object.freeze({ resource: "account", id: "frozen" }),
    nullProto: () => Object.assign(Object.create(null), { resource: "account" }),
    loneSurrogates: () => "\uD800x\uDFFF",
    controls: () => "\u0000\u0001\u001f\u007f\n\r\t",
    thenable: () => ({ then(resolve) { resolve(1); } }),
    hangingThenable: () => ({ then() {} }),
    bigint: () => 10n ** 30n,
    symbol: () => Symbol("hostile"),
    fn: () => function hostile() { return 1; },
    date: () => new Date(NaN),
    map: () => new Map([["a", 1]]),
    typed: () => new Uint8Array([1, 2, 3]),
    sparse: () => { const a = []; a[1_000] = 1; return a; },
    boxed: () => new String("account"), // eslint-disable-line no-new-wrappers
    // A call's options ({ signal }) that cannot be read, or listened to.
    signalGetterThrows: () => ({ signal: { get aborted() { throw new Error("aborted getter"); }, addEventListener() {} } }),
    signalListenThrows: () => ({ signal: { aborted: false, addEventListener() { throw new Error("listen"); } } }),
    signalProxy: () => ({ signal: new Proxy({}, { get() { throw new Error("signal proxy"); } }) }),
    signalAborted: () => ({ signal: AbortSignal.abort() }),
    signalLater: () => { const ac = new AbortController(); setTimeout(() => ac.abort(), 5); return { signal: ac.signal }; },
  };
  return fc.oneof(
    fc.constantFrom(null, undefined, NaN, Infinity, -Infinity, -1, -0, 0.5, 2 ** 53 + 2, 1e308, 0, 1, "", " ",
      "account", "create_account", "GET", "PROCESSED", "nope", true, false, [], {}, [null], { id: null }),
    fc.constantFrom(...Object.keys(fresh)).map((k) => new Fresh(k, fresh[k])),
    fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
    fc.double(),
    fc.integer(),
    fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true, withTypedArray: true,
      withSparseArray: true, withBoxedValues: true, withDate: true, maxDepth: 3 }),
  );
}

/** A callback that misbehaves in one of the ways a caller's can. */
export function badCallbacks(fc) {
  return fc.tuple(fc.constantFrom("throws", "rejects", "garbage", "hangs", "throwsLater", "ok"), hostileValues(fc))
    .map(([how, garbage]) => ({
      how,
      [fc.toStringMethod]: () => `callback(${how}${how === "garbage" ? ` ${fc.stringify(garbage)}` : ""})`,
      make: (good) => (...args) => {
        switch (how) {
          case "throws": throw new Error("callback throws");
          case "rejects": return Promise.reject(new TypeError("callback rejects"));
          case "garbage": return materialise(garbage);
          case "hangs": return new Promise(() => {});
          case "throwsLater": return new Promise((_, reject) => setTimeout(() => reject("a string, not an Error"), 5));
          default: return good(...args);
        }
      },
    }));
}

const set = (object, path, value) => {
  if (path.length === 0) return value;
  const copy = Array.isArray(object) ? [...object] : { ...object };
  const [head, ...rest] = path;
  copy[head] = set(object?.[head] ?? {}, rest, value);
  return copy;
};

const COMMAND_PATHS = [[], ["aggregate"], ["aggregate", "resource"], ["aggregate", "id"], ["aggregate", "tenantId"],
  ["aggregate", "ownerId"], ["aggregate", "contextAlias"], ["action"], ["method"], ["path"], ["body"], ["body", "name"],
  ["body", "balance"], ["intentKey"], ["create"], ["idInPath"], ["waitStage"], ["waitContext"], ["waitTailStage"],
  ["expectedVersion"], ["timeoutMs"], ["waitTimeoutMs"], ["headers"], ["headers", "X-Tag"]];
const CONNECT_PATHS = [[], ["baseUrl"], ["storage"], ["namespace"], ["timeoutMs"], ["waitStage"], ["waitTimeoutMs"],
  ["retry"], ["retry", "maxAttempts"], ["retry", "baseMs"], ["retry", "maxConfirms"], ["headers"], ["confirm"],
  ["requestId"], ["retentionDays"], ["resume"], ["callbackTimeoutMs"], ["maxBodyChars"], ["maxBodyDepth"]];
const CONSUMER_PATHS = [[], ["storage"], ["namespace"], ["leaseMs"], ["maxWaitMs"], ["effectTimeoutMs"],
  ["callbackTimeoutMs"], ["reconcile"], ["allowDuplicateEffects"]];
const ADAPTER_OPS = ["get", "set", "delete", "list", "compareAndSet"];

/** Races `promise` against `ms`: the settlement, or `{ hung: true }`. */
function within(promise, ms) {
  let timer;
  return Promise.race([
    promise.then((value) => ({ value }), (error) => ({ error })),
    new Promise((resolve) => { timer = setTimeout(() => resolve({ hung: true }), ms); }),
  ]).finally(() => clearTimeout(timer));
}

export async function fuzzBoundary({ sdk, fc, base, runs = 200, seed = 1, storage = "memory", print = () => {}, escapes }) {
  const { WowClient, CommandError, IdempotentConsumer, EffectError, memoryAdapter } = sdk;
  const hostile = hostileValues(fc);
  const callbacks = badCallbacks(fc);
  const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;
  const command = (id = unique("fz")) => ({
    aggregate: { resource: "account", id }, action: "create_account", create: true, body: { name: id, balance: 10 } });
  const options = { user: null, baseUrl: base, storage, namespace: unique("fuzz"), timeoutMs: 3_000, callbackTimeoutMs: 100,
    retry: { maxAttempts: 2, baseMs: 5, maxMs: 20, maxConfirms: 2 } };
  const client = await WowClient.connect(options);
  const consumer = await IdempotentConsumer.open({ storage: "memory", leaseMs: 1_000, effectTimeoutMs: 100,
    callbackTimeoutMs: 100 });
  const bound = 20_000;
  const counts = {};
  const failures = [];

  /**
   * One call: it settles, with a value or the package's typed error, and
   * nothing escapes. A mistake in a call's arguments (connect's options, a
   * call's options, a decision, a filter) is a TypeError naming the call: no
   * command was judged, so no code.
   */
  const CONNECT = Symbol("connect: a CommandError, or a TypeError for a mistake in its options");
  const MISTAKE = /^(WowClient\.connect|sendAndWait|send|sendAndWaitStream|confirm|retry|resume|awaitDownstream|requestPersistentStorage|subscribe): /;
  const check = async (name, call, typed) => {
    counts[name] = (counts[name] ?? 0) + 1;
    let result;
    try {
      result = await within(Promise.resolve().then(call), bound);
    } catch (e) {
      result = { error: e };
    }
    if (result.hung) throw new Error(`${name} did not settle within ${bound} ms`);
    if ("error" in result) {
      const e = result.error;
      // A mistake in the arguments is a TypeError naming the call (no intent exists to carry a code).
      const config = typed !== EffectError && e instanceof TypeError && MISTAKE.test(e.message);
      const expected = typed === CONNECT ? CommandError : typed;
      if (!config && (!(e instanceof expected) || !(e instanceof Error) || typeof e.code !== "string" || !e.code)) {
        throw new Error(`${name} rejected with something other than ${expected.name} or a TypeError naming the call: ${describe(e)}`);
      }
      if (/CommandInput|struct |serde|invalid type: |expected .* at line|wasm|unreachable|RuntimeError/.test(e.message)) {
        throw new Error(`${name}: the message speaks Rust, not the caller's language: ${e.message}`);
      }
    }
    const escaped = escapes();
    if (escaped.length) throw new Error(`${name}: escaped uncaught: ${escaped.map(describe).join("; ")}`);
    if (Object.prototype.polluted !== undefined) throw new Error(`${name}: Object.prototype was polluted`);
    return result;
  };

  const drain = async (stream) => {
    for await (const _ of stream) { /* every element */ }
    return stream.outcome;
  };
  // The same handle read as a ReadableStream instead of an async iterator.
  const readAll = async (handle) => {
    const reader = handle.stream.getReader();
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch { /* the stream errors with the outcome's CommandError */ }
    return handle.outcome;
  };

  const property = fc.asyncProperty(
    fc.oneof(
      fc.record({ kind: fc.constantFrom("sendAndWait", "send", "sendAndWaitStream", "streamOutcome", "readableStream"),
        path: fc.constantFrom(...COMMAND_PATHS), value: hostile, second: fc.option(hostile, { nil: undefined }) }),
      fc.record({ kind: fc.constant("connect"), path: fc.constantFrom(...CONNECT_PATHS), value: hostile }),
      fc.record({ kind: fc.constantFrom("headers", "confirm"), callback: callbacks, drop: fc.boolean() }),
      fc.record({ kind: fc.constant("adapter"), op: fc.constantFrom(...ADAPTER_OPS), callback: callbacks,
        consumer: fc.boolean() }),
      fc.record({ kind: fc.constantFrom("confirm()", "retry()", "resume()", "awaitDownstream()", "intents()", "quarantined()", "prune()", "clear()"),
        value: hostile, second: hostile }),
      fc.record({ kind: fc.constant("consumerOpen"), path: fc.constantFrom(...CONSUMER_PATHS), value: hostile }),
      fc.record({ kind: fc.constantFrom("handle", "find", "forget", "consumerPrune", "records"), value: hostile, second: hostile,
        effect: callbacks, reconcile: callbacks, third: hostile }),
    ),
    async (c) => {
      await one(c);
      // The journal stays readable after every case.
      const listed = await within(client.intents(), bound);
      if (!Array.isArray(listed.value)) throw new Error(`intents() answered ${describe(listed.error ?? listed.value)}`);
    });

  /** Runs one generated case. */
  async function one(generated) {
      const c = Object.fromEntries(Object.entries(generated).map(([k, v]) => [k, materialise(v)]));
      const good = command();
      switch (c.kind) {
        case "sendAndWait": return check(c.kind, () => client.sendAndWait(set(good, c.path, c.value), c.second), CommandError);
        case "send": return check(c.kind, () => client.send(set(good, c.path, c.value), c.second), CommandError);
        case "sendAndWaitStream": return check(c.kind, () => drain(client.sendAndWaitStream(set(good, c.path, c.value), c.second)), CommandError);
        case "streamOutcome": return check(c.kind, () => client.sendAndWaitStream(set(good, c.path, c.value)).outcome, CommandError);
        case "readableStream": return check(c.kind, () => readAll(client.sendAndWaitStream(set(good, c.path, c.value), c.second)), CommandError);
        case "connect": {
          const r = await check(c.kind, () => WowClient.connect(set(options, c.path, c.value)), CONNECT);
          if (r.value) await check("connect → sendAndWait", () => r.value.sendAndWait(command()), CommandError);
          return;
        }
        case "headers":
        case "confirm": {
          // A dropped response forces the confirm path; headers run before every send.
          if (c.drop) await fetch(`${base}/__gateway/faults`, { method: "POST", headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ rules: [{ match: { aggregateId: good.aggregate.id }, fault: "drop_response_after_append", times: 1 }] }) });
          const good2 = c.kind === "headers" ? () => ({ "X-Fuzz": "1" }) : () => ({ appended: false });
          const other = await WowClient.connect({ user: null, ...options, [c.kind]: c.callback.make(good2) });
          return check(`${c.kind} callback ${c.callback.how}`, () => other.sendAndWait(good), CommandError);
        }
        case "adapter": {
          const adapter = { ...memoryAdapter() };
          adapter[c.op] = c.callback.make(adapter[c.op]);
          if (c.consumer) {
            const r = await check(`consumer adapter.${c.op} ${c.callback.how}`,
              () => IdempotentConsumer.open({ storage: adapter, callbackTimeoutMs: 100 }), EffectError);
            if (r.value) await check(`consumer adapter.${c.op} ${c.callback.how} → handle`, () => r.value.handle(unique("i"), () => 1), EffectError);
            return;
          }
          const r = await check(`adapter.${c.op} ${c.callback.how}`,
            () => WowClient.connect({ user: null, ...options, storage: adapter, namespace: unique("ad") }), CONNECT);
          if (r.value) await check(`adapter.${c.op} ${c.callback.how} → sendAndWait`, () => r.value.sendAndWait(good), CommandError);
          return;
        }
        case "confirm()": return check(c.kind, () => client.confirm(c.value, c.second), CommandError);
        case "retry()": return check(c.kind, () => client.retry(c.value, c.second), CommandError);
        case "resume()": return check(c.kind, () => client.resume(c.value), CommandError);
        case "awaitDownstream()": return check(c.kind, () => client.awaitDownstream(c.value, c.second), CommandError);
        case "intents()": return check(c.kind, () => client.intents(c.value), CommandError);
        case "quarantined()": return check(c.kind, () => client.quarantined(c.value), CommandError);
        case "prune()": return check(c.kind, () => client.prune(c.value), CommandError);
        case "clear()": {
          // On a client of its own namespace, so the shared journal's checks still mean something.
          const other = await WowClient.connect({ user: null, ...options, namespace: unique("clear") });
          await check("clear() → send", () => other.send(command()), CommandError);
          return check(c.kind, () => other.clear(c.value), CommandError);
        }
        case "consumerOpen": {
          const r = await check(c.kind, () => IdempotentConsumer.open(set({ storage: "memory", leaseMs: 1_000 }, c.path, c.value)), EffectError);
          if (r.value) await check("consumerOpen → handle", () => r.value.handle(unique("i"), () => 1), EffectError);
          return;
        }
        case "handle": {
          const identity = typeof c.value === "string" && c.value ? c.value : unique("id");
          await check(`handle identity`, () => consumer.handle(c.value, () => 1, c.third), EffectError);
          return check(`handle effect ${c.effect.how} reconcile ${c.reconcile.how}`, async () => {
            await consumer.handle(identity, c.effect.make(() => "ran")).catch(() => {});
            return consumer.handle(identity, c.effect.make(() => "ran"), { reconcile: c.reconcile.make(() => "run") });
          }, EffectError);
        }
        case "find": return check(c.kind, () => consumer.find(c.value), EffectError);
        case "forget": return check(c.kind, () => consumer.forget(c.value), EffectError);
        case "consumerPrune": return check(c.kind, () => consumer.prune(c.value), EffectError);
        case "records": return check(c.kind, () => consumer.records(c.value), EffectError);
      }
  }

  let tried = 0;
  try {
    await fc.assert(property.beforeEach(() => { tried += 1; }), { numRuns: runs, seed, endOnFailure: true, includeErrorInReport: true,
      interruptAfterTimeLimit: 15 * 60_000 });
  } catch (e) {
    failures.push(e.message);
  }
  // Nothing is poisoned: the same client and consumer still work, and the
  // journal holds only states that resume() settles.
  if (!failures.length) {
    const after = await within(client.send(command()), bound);
    if (after.hung || after.error || after.value.status !== "succeeded") {
      failures.push(`after the fuzz a normal command did not succeed: ${describe(after.error ?? after.value)}`);
    }
    const resumed = await within(client.resume(), bound * 3);
    if (resumed.hung || resumed.error) failures.push(`resume() after the fuzz: ${describe(resumed.error ?? "hung")}`);
    const intents = await client.intents();
    const known = new Set(["succeeded", "rejected", "unknown", "conflict", "escalated", "pending", "sending"]);
    const odd = intents.filter((r) => !known.has(r.state));
    if (odd.length) failures.push(`intents in no known state: ${JSON.stringify(odd.slice(0, 3))}`);
    const stuck = intents.filter((r) => r.state === "pending" || r.state === "sending");
    if (stuck.length) failures.push(`intents left pending or sending after resume(): ${stuck.length}`);
    const handled = await within(consumer.handle(unique("final"), () => "ok"), bound);
    if (handled.hung || handled.error || handled.value.status !== "ran") {
      failures.push(`after the fuzz the consumer did not run a normal effect: ${describe(handled.error ?? handled.value)}`);
    }
  }
  print(`fuzzed the JS boundary with ${tried} generated inputs (seed ${seed}): ${Object.entries(counts)
    .sort(([, a], [, b]) => b - a).map(([k, n]) => `${k} ${n}`).join(", ")}`);
  return { tried, calls: Object.values(counts).reduce((a, b) => a + b, 0), failures };
}

function describe(e) {
  try {
    if (e instanceof Error) return `${e.name}${e.code ? `[${e.code}]` : ""}: ${e.message}`;
    return typeof e === "string" ? e : JSON.stringify(e) ?? String(e);
  } catch {
    return String(e);
  }
}
