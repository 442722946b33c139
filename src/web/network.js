// `navigator.onLine` and the `online` event, and the requests sent over the
// network and their JSON answers (src/web/executor.rs sends and reads them).
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

// Where a client's requests may go: `base`, its `baseUrl` (checked in Rust:
// http(s), a host, no credentials, query or fragment), kept with the
// client's holdings `of` as an origin and a path that ends in "/".
export function fenceTo(of, base) {
  const b = new URL(base);
  of.fence = { origin: b.origin, path: b.pathname.endsWith("/") ? b.pathname : `${b.pathname}/`, href: b.href };
}

// A request to the gateway, sent in one call (src/web/executor.rs):
// `headers` is "name\nvalue\nname\nvalue…" (names are distinct tokens and
// values visible ASCII, both checked in Rust). It goes to fetch() as a URL
// and an init, not as a Request for gloo-net to send, which costs the module
// about 0.5 KB gzip and the main thread nothing less. Its URL, parsed as the
// runtime parses it, must lie under the client's `baseUrl` (same origin, its
// path under the base's path, no credentials, query or fragment): anything
// else is thrown here, before anything leaves. A redirect is never followed:
// it is an answer the SDK cannot trust, rejected as a lost one (the intent is
// confirmed first), naming its target where the runtime shows it (Node.js,
// Deno, Bun, workerd; a browser shows none). It is aborted after `timeoutMs`
// (the attempt's deadline, a history query's bound): the request and the
// reading of its body end then (a `TimeoutError`); its timer keeps no runtime
// alive. It is aborted too when its client's holdings `of` are let go (the
// client freed, the instance stopped): nobody would read its answer.
// `held`: a large body's text as the caller gave it, sent in place of `body`.
export function gatewayFetch(url, method, headers, body, timeoutMs, of, held) {
  // Pairs, as fetch takes them fastest (an object made with no prototype,
  // so that a "__proto__" header is a header, is a dictionary to V8).
  const h = [];
  const parts = headers ? headers.split("\n") : [];
  for (let i = 0; i + 1 < parts.length; i += 2) h.push([parts[i], parts[i + 1]]);
  const u = new URL(url), fence = of?.fence;
  if (u.username || u.password || u.search || u.hash || (fence && (u.origin !== fence.origin || !u.pathname.startsWith(fence.path)))) {
    throw new TypeError(`${url} is not under baseUrl ${fence?.href}: refused, nothing sent`);
  }
  const abort = new AbortController();
  // Forgotten at the deadline, when the request and its body's reading end anyway.
  const forget = holding(() => abort.abort(), of);
  unref(setTimeout(() => {
    forget();
    abort.abort(new DOMException("", "TimeoutError"));
  }, Math.min(Math.max(timeoutMs, 1), 2147483647)));
  // A GET (a snapshot read) carries no body.
  return fetch(url, { method, headers: h, body: method === "GET" ? undefined : held ?? body, signal: abort.signal, redirect: "manual" })
    .then((r) => {
      if (r.type !== "opaqueredirect" && (r.status < 300 || r.status > 399)) return r;
      const to = r.headers.get("location");
      r.body?.cancel().catch(() => {});
      throw new TypeError(`a redirect (${r.status || "opaque"}) was refused${to ? ` (to ${to})` : ""}: the answer counts as lost`);
    });
}

// A whole answer's body, read and parsed here, once, up to `limit` bytes:
// `{ value }` (what JSON.parse made of it), `{ reason }` (blank, or not JSON,
// with the start of the text), or a rejection when the body could not be
// read (a cut connection) or is larger than `limit` (read no further: a
// larger answer counts as lost). The text never crosses into the module to
// be parsed again.
export async function readJsonBody(response, limit) {
  const text = await boundedText(response, limit);
  if (text.trim() === "") return { reason: "empty body" };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    return { reason: `not JSON (${e.name}: ${e.message}): ${text.slice(0, 120)}` };
  }
}

const utf8 = new TextDecoder();
const tooLarge = (limit) => new RangeError(`the answer is larger than maxAnswerBytes (${limit}): read no further, it counts as lost`);

// A body's text, read chunk by chunk up to `limit` bytes (its declared
// length first, and what arrives whatever that said: a compressed answer's
// declared length is not its size).
async function boundedText(response, limit) {
  if (Number(response.headers.get("content-length")) > limit) {
    response.body?.cancel().catch(() => {});
    throw tooLarge(limit);
  }
  if (!response.body) return "";
  const reader = response.body.getReader(), chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) { reader.cancel().catch(() => {}); throw tooLarge(limit); }
    chunks.push(value);
  }
  const whole = chunks.length === 1 ? chunks[0] : new Uint8Array(size);
  if (chunks.length !== 1) { let at = 0; for (const c of chunks) { whole.set(c, at); at += c.byteLength; } }
  return utf8.decode(whole);
}

// A stage stream's reader of text: the body decoded as UTF-8 here, as the
// SSE standard decodes it (a sequence split across chunks joined, a bad one
// replaced), so only whole text crosses into the module. The BOM is left to
// the module's decoder, which drops one at the start as the standard does.
export function textReader(body) {
  return body.pipeThrough(new TextDecoderStream("utf-8", { ignoreBOM: true })).getReader();
}
