// `navigator.onLine` and the `online` event (src/web/network.rs), and the
// requests sent over the network and their JSON answers (src/web/http.rs).
import { holding, owned } from "./held.js";
import { unref } from "./runtime.js";

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

// Calls `f` on every `online` event, or (`visible`) each time the page
// becomes visible again; returns the function that stops it. Stopped with
// the client's holdings `of` too.
export function onWake(f, visible, of) {
  const target = visible ? globalThis.document : globalThis;
  const kind = visible ? "visibilitychange" : "online";
  const g = visible ? () => { if (target.visibilityState === "visible") f(); } : f;
  target?.addEventListener?.(kind, g);
  return owned(() => target?.removeEventListener?.(kind, g), of);
}

// A request to the gateway, sent in one call (src/web/http.rs): `headers`
// is "name\nvalue\nname\nvalue…" (names are distinct tokens and values
// visible ASCII, both checked in Rust). It goes to fetch() as a URL and an
// init, not as a Request for gloo-net to send, which costs the module about
// 0.5 KB gzip and the main thread nothing less. What the Request constructor
// refuses (an invalid URL, one with credentials) is thrown here, before
// anything leaves; fetch() itself only rejects, as for a request lost on the
// way. It is aborted after `timeoutMs` (the attempt's deadline, a history
// query's bound): the request and the reading of its body end then (a
// `TimeoutError`); its timer keeps no runtime alive. It is aborted too when
// its client's holdings `of` are let go (the client freed, the instance
// stopped): nobody would read its answer.
export function gatewayFetch(url, method, headers, body, timeoutMs, of) {
  // Pairs, as fetch takes them fastest (an object made with no prototype,
  // so that a "__proto__" header is a header, is a dictionary to V8).
  const h = [];
  const parts = headers ? headers.split("\n") : [];
  for (let i = 0; i + 1 < parts.length; i += 2) h.push([parts[i], parts[i + 1]]);
  const parsed = new URL(url);
  if (parsed.username || parsed.password) throw new TypeError(`${url} includes credentials`);
  const abort = new AbortController();
  // Forgotten at the deadline, when the request and its body's reading end anyway.
  const forget = holding(() => abort.abort(), of);
  unref(setTimeout(() => {
    forget();
    abort.abort(new DOMException("", "TimeoutError"));
  }, Math.min(Math.max(timeoutMs, 1), 2147483647)));
  // A GET (a snapshot read) carries no body.
  return fetch(url, { method, headers: h, body: method === "GET" ? undefined : body, signal: abort.signal });
}

// A whole answer's body, read and parsed here, once: `{ value }` (what
// JSON.parse made of it), `{ reason }` (blank, or not JSON, with the start
// of the text), or a rejection when the body could not be read (a cut
// connection). The text never crosses into the module to be parsed again.
export async function readJsonBody(response) {
  const text = await response.text();
  if (text.trim() === "") return { reason: "empty body" };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { reason: `not JSON (${e.name}: ${e.message}): ${text.slice(0, 120)}` };
  }
}

// A stage stream's reader of text: the body decoded as UTF-8 here, as the
// SSE standard decodes it (a sequence split across chunks joined, a bad one
// replaced), so only whole text crosses into the module. The BOM is left to
// the module's decoder, which drops one at the start as the standard does.
export function textReader(body) {
  return body.pipeThrough(new TextDecoderStream("utf-8", { ignoreBOM: true })).getReader();
}
