// Web Locks, kept to what the SDK needs (src/web/locks.rs).
import { unref } from "./runtime.js";

// Resolves to a release function when the lock was free, to null when
// another tab or worker holds it, and to undefined when the Locks API is
// missing (automatic resume is then off rather than racing).
export function lockTry(name) {
  const locks = globalThis.navigator && globalThis.navigator.locks;
  if (!locks) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const request = locks
      .request(name, { ifAvailable: true }, (lock) => {
        if (!lock) {
          resolve(null);
          return undefined;
        }
        // Held until the returned promise settles: until release() is called
        // (which answers the request's promise, settled once the lock is free).
        return new Promise((release) => resolve(() => (release(), request)));
      });
    request.catch(reject);
  });
}

// Waits up to `timeoutMs` for the lock: resolves to a release function, to
// null on timeout, and to undefined when the Locks API is missing or
// refuses the request (every caller treats both alike). It never rejects:
// its answer may be collected long after it settles (src/web/locks.rs).
export function lockWait(name, timeoutMs) {
  const locks = globalThis.navigator && globalThis.navigator.locks;
  if (!locks) return Promise.resolve(undefined);
  // Free, as an intent's lock nearly always is: taken at once, without the
  // timer and the abort signal a wait needs (a burst of 500 sends made 500
  // of each for nothing).
  return lockTry(name).then((release) => release ?? waitFor(locks, name, timeoutMs), () => undefined);
}

function waitFor(locks, name, timeoutMs) {
  const controller = new AbortController();
  // Unref'd: a call waiting for a lock is held alive by its own pending
  // promise (runtime.js `hold`), and the history probe's wait must not hold a process.
  const timer = unref(setTimeout(() => controller.abort(), Math.min(Math.max(0, timeoutMs), 2147483647)));
  return new Promise((resolve) => {
    const refused = (e) => { clearTimeout(timer); resolve(e && e.name === "AbortError" ? null : undefined); };
    try {
      const request = locks
        .request(name, { signal: controller.signal }, () => {
          clearTimeout(timer);
          return new Promise((release) => resolve(() => (release(), request)));
        });
      request.catch(refused);
    } catch (e) {
      refused(e);
    }
  });
}

// A lock for background work no caller waits on (the history probe's): in
// a page or a worker, as `lockWait` with no end; in a server process
// (Node.js, Deno, Bun) undefined, as where there are no Web Locks: there a
// held lock would keep the process alive after its calls have settled, and
// each process leads its own probe.
export function lockBackground(name) {
  return globalThis.document || globalThis.WorkerGlobalScope ? lockWait(name, 2147483647) : Promise.resolve(undefined);
}
