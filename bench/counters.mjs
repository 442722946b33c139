// The counters of bench 4g (bench/run.mjs) and of the ceiling on them in
// `npm test` (tests/e2e/crossings.test.mjs): a page's init script that
// counts each call the module makes into JS (its imports, wrapped as
// `WebAssembly.instantiate` hands them over: `window.crossed`) and the
// page's calls into the browser a command costs (timers, tasks, abort
// controllers, locks, IndexedDB, channels, text decoding: `window.platform`).
// A count, not a time: the same on every run and every machine.

/** For `page.addInitScript(countCalls)`. */
export function countCalls() {
  window.platform = new Map();
  const count = (name) => window.platform.set(name, (window.platform.get(name) ?? 0) + 1);
  const wrap = (target, key, name) => {
    const f = target[key];
    target[key] = function (...a) { count(name); return f.apply(this, a); };
  };
  for (const key of ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "queueMicrotask"]) wrap(window, key, key);
  wrap(LockManager.prototype, "request", "locks.request");
  for (const key of ["put", "add", "get"]) wrap(IDBObjectStore.prototype, key, `IDBObjectStore.${key}`);
  wrap(IDBDatabase.prototype, "transaction", "IDBDatabase.transaction");
  wrap(BroadcastChannel.prototype, "postMessage", "BroadcastChannel.postMessage");
  wrap(TextDecoder.prototype, "decode", "TextDecoder.decode");
  wrap(JSON, "parse", "JSON.parse");
  if (globalThis.Scheduler?.prototype?.postTask) wrap(Scheduler.prototype, "postTask", "scheduler.postTask");
  const Controller = AbortController;
  window.AbortController = class extends Controller { constructor() { super(); count("new AbortController"); } };
  window.crossed = new Map();
  for (const name of ["instantiate", "instantiateStreaming"]) {
    const original = WebAssembly[name];
    WebAssembly[name] = function (source, imports, ...rest) {
      const wrapped = {};
      for (const [module, fns] of Object.entries(imports ?? {})) {
        wrapped[module] = {};
        for (const [k, f] of Object.entries(fns)) {
          wrapped[module][k] = typeof f !== "function" ? f
            : function (...a) { window.crossed.set(k, (window.crossed.get(k) ?? 0) + 1); return f.apply(this, a); };
        }
      }
      return original.call(this, source, imports && wrapped, ...rest);
    };
  }
}
