// `navigator.onLine` and the `online` event (src/web/network.rs).

// Whether the runtime reports being online; runtimes without `navigator.onLine`
// (Node, edge runtimes) always are.
export function isOnline() { return globalThis.navigator?.onLine !== false; }

// Resolves once the runtime reports being online again: on its `online`
// event, or at a check every few seconds where that event is missed.
export function whenOnline() {
  return new Promise((resolve) => {
    if (isOnline()) return resolve();
    const done = () => { if (!isOnline()) return; globalThis.removeEventListener?.("online", done); clearInterval(poll); resolve(); };
    const poll = setInterval(done, 5000);
    globalThis.addEventListener?.("online", done);
  });
}

// Calls `f` on every `online` event; returns the function that stops it.
export function onOnline(f) {
  globalThis.addEventListener?.("online", f);
  return () => globalThis.removeEventListener?.("online", f);
}
