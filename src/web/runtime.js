// Timers, randomness and bounded callback calls (src/web/time.rs, random.rs, mod.rs).

export function sleepMs(ms) { return new Promise((r) => setTimeout(r, Math.max(0, ms))); }
export function after(ms, f) { return setTimeout(f, Math.max(0, ms)); }
export function cancelAfter(handle) { clearTimeout(handle); }

export function randomBytes(n) {
  const b = new Uint8Array(n);
  globalThis.crypto.getRandomValues(b);
  return b;
}

export function callWithin(f, self, args, ms, what) {
  let returned;
  try { returned = f.apply(self, args); } catch (e) { return Promise.reject(e); }
  if (!(ms > 0)) return Promise.resolve(returned);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      const e = new Error(`${what} did not settle within ${ms} ms`);
      e.name = "TimeoutError";
      reject(e);
    }, ms);
    Promise.resolve(returned).then((v) => { clearTimeout(timer); resolve(v); },
                                   (e) => { clearTimeout(timer); reject(e); });
  });
}
