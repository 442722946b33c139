// The test gateway for Node-side tests: started on a free port over a
// SQLite file, with its fault control and an independent history check.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const root = new URL("../..", import.meta.url).pathname;

/**
 * How many event streams of `aggregateId` carry `requestId`, from the query
 * API: asked in 8.10's `condition` shape (which Wow 9 also reads), or in the
 * `filter` shape with `{ filter: true }` (a gateway run with `--wow 10`).
 */
export async function storedCount(base, resource, aggregateId, requestId, { filter = false, headers = {} } = {}) {
  const tree = filter
    ? { op: "AND", operands: [{ op: "AGGREGATE_ID", value: aggregateId }, { field: "requestId", op: "EQ", value: requestId }] }
    : { operator: "AND", children: [{ operator: "AGGREGATE_ID", value: aggregateId }, { field: "requestId", operator: "EQ", value: requestId }] };
  const r = await fetch(`${base}/${resource}/event/count`, {
    method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(tree),
  });
  return r.json();
}

/** The requestIds of an aggregate's streams in history, in version order (the query API; `filter` as for storedCount). */
export async function historyOf(base, resource, aggregateId, { filter = false, headers = {} } = {}) {
  const body = filter
    ? { filter: { op: "AGGREGATE_ID", value: aggregateId }, limit: 1000 }
    : { condition: { operator: "AGGREGATE_ID", value: aggregateId }, limit: 1000 };
  const r = await fetch(`${base}/${resource}/event/list`, {
    method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`list failed: ${r.status}`);
  return (await r.json()).sort((a, b) => a.version - b.version).map((s) => s.requestId);
}

/** Opens an account with `balance` on the gateway at `base`; resolves to its id, `prefix-` and eight random characters. */
export async function createAccount(base, prefix = "acct", balance = 1_000_000) {
  const id = `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
  const r = await fetch(`${base}/account/create_account`, {
    method: "POST", headers: { "Content-Type": "application/json", "Command-Aggregate-Id": id },
    body: JSON.stringify({ name: id, balance }) });
  if (r.status !== 200) throw new Error(`create_account answered ${r.status}`);
  return id;
}

/**
 * Starts the gateway; `db` defaults to a fresh file, `port` to a free one,
 * `www: true` serves the demo (or a folder given instead), `quiet` drops its log.
 */
export async function startGateway({ db, port = 0, www = false, pkg, seed, profile = "debug", quiet = false, wow, gatewayOnly = false, queryScope = false } = {}) {
  db ??= join(mkdtempSync(join(tmpdir(), "wow-gateway-")), "events.sqlite");
  const args = ["--listen", `127.0.0.1:${port}`, "--db", db, "--retry-backoff-ms", "5"];
  if (www) args.push("--www", www === true ? join(root, "www") : www, "--pkg", pkg ?? join(root, "pkg"));
  if (seed !== undefined) args.push("--seed", String(seed));
  if (queryScope) args.push("--query-scope"); // queries need an Authorization header (Wow 9's IllegalAccessQueryScope)
  if (gatewayOnly) args.push("--gateway-only"); // a gateway-only service (Wow 9.3): duplicates refused at PROCESSED
  if (wow !== undefined) args.push("--wow", wow);   // "9" (the default), "8.10" or "10" (the condition shape removed, as planned)
  const child = spawn(join(root, `target/${profile}/wow-test-gateway`), args, { stdio: ["ignore", "pipe", quiet ? "ignore" : "inherit"] });
  const base = await new Promise((resolve, reject) => {
    child.stdout.once("data", (d) => {
      const m = /^listening on (\S+)/.exec(String(d));
      m ? resolve(m[1]) : reject(new Error(`unexpected: ${d}`));
    });
    child.once("exit", (code) => reject(new Error(`gateway exited ${code}`)));
  });
  const faults = async (method, body) => {
    const r = await fetch(`${base}/__gateway/faults`, {
      method, headers: { "Content-Type": "application/json" }, body: body && JSON.stringify(body) });
    if (!r.ok) throw new Error(`fault control answered ${r.status}`);
    return r.json();
  };
  // Resolves once nothing is being processed (delayed deliveries have landed,
  // downstream stages have run): the condition tests used to sleep for.
  const idle = async (timeoutMs = 30_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const { processing } = await faults("GET");
      if (processing === 0) return;
      if (Date.now() > until) throw new Error(`the gateway was still processing ${processing} messages after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  // How this gateway's history is asked: the shape it reads, credentials where it needs them.
  const asked = { filter: wow === "10", headers: queryScope ? { Authorization: "Bearer test-support" } : {} };
  return {
    base, db, child, faults, idle,
    stored: (resource, aggregateId, requestId) => storedCount(base, resource, aggregateId, requestId, asked),
    history: (resource, aggregateId) => historyOf(base, resource, aggregateId, asked),
    stop: () => new Promise((resolve) => { child.once("exit", resolve); child.kill("SIGKILL"); }),
  };
}
