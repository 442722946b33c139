// The gateway held to Wow's own OpenAPI document by an outside fuzzer:
// schemathesis (PyPI, in target/venv from scripts/bootstrap.sh) against a
// fresh gateway, on the cart and sales-order operations it serves, with
// deterministic generation. Every finding must be in the reviewed list of
// departures (`departures.json`, schemathesis's own baseline format, each
// entry saying why and which Wow source shows the behaviour); anything else
// fails the run. fidelity_hooks.py bounds a drawn wait timeout to 30 s and
// puts the SDK's projection on one list query in ten (it says why).
//
//   node tests/gateway/fidelity/run.mjs [--examples N] [--record FILE] [--phases LIST]
//   (npm test: --examples 5; scripts/fidelity.sh: --examples 25, every phase)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, copyFileSync, existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { root, startGateway } from "../../support/gateway.mjs";

const { values } = parseArgs({ options: {
  examples: { type: "string", default: "5" },
  record: { type: "string" },
  phases: { type: "string" },
} });
const here = new URL(".", import.meta.url).pathname;
const departures = join(here, "departures.json");
const document = join(root, "tests/fixtures/wow-8.10.10/example-domain-openapi.json");
const schemathesis = join(root, "target/venv/bin/schemathesis");
if (!existsSync(schemathesis)) {
  console.error("schemathesis is not installed: run scripts/bootstrap.sh");
  process.exit(1);
}

// The reviewed list: every entry says why the gateway answers so, and where Wow does the same.
const reviewed = JSON.parse(readFileSync(departures, "utf8"));
const unexplained = reviewed.entries.filter((e) => !e.why?.trim() || !e.wow?.trim());
if (unexplained.length && !values.record) {
  console.error(`departures.json: ${unexplained.length} entries without \`why\` and \`wow\`: ${unexplained.map((e) => e.id).join(", ")}`);
  process.exit(1);
}

// The cart and sales-order operations the gateway serves (its README lists the rest as not served).
const served = [
  "cart\\.(add_cart_item|change_quantity|remove_cart_item|view_cart|aggregate\\.load|owner\\.snapshot\\.load|event_stream\\.load)",
  "order\\.(create_order|pay_order|tenant\\.aggregate\\.load|tenant\\.owner\\.snapshot\\.load|tenant\\.event_stream\\.load)",
  "(cart|order)\\.(default_delete_aggregate|default_recover_aggregate)",
  "cart\\.(owner\\.)?event\\.(count|list_query|paged_query)",
  "order\\.((owner|tenant)\\.)?event\\.(count|list_query|paged_query)",
];
const gateway = await startGateway({ quiet: true });
const reports = mkdtempSync(join(tmpdir(), "wow-fidelity-"));
const args = [
  "run", document, "--url", gateway.base,
  "--include-operation-id-regex", `^example\\.(${served.join("|")})$`,
  "--generation-deterministic", "--seed", "1", "--max-examples", values.examples, "--workers", "1",
  "--request-timeout", "35", "--no-color",
  "--baseline", values.record ? join(reports, "recorded.json") : departures,
  ...(values.record ? ["--baseline-update"] : []),
  ...(values.phases ? ["--phases", values.phases] : []),
  "--report", "json", "--report-dir", reports,
];
if (values.record) copyFileSync(departures, join(reports, "recorded.json"));
const started = Date.now();
const code = await new Promise((resolve) => {
  // In the run's own folder: schemathesis keeps a cache of earlier failures
  // (.schemathesis/) in its working directory and replays them, which would
  // make a run depend on the ones before it.
  // fidelity_hooks.py bounds a drawn Command-Wait-Timeout to 30 s (it says why).
  const env = { ...process.env, NO_COLOR: "1", SCHEMATHESIS_HOOKS: join(here, "fidelity_hooks.py") };
  const child = spawn(schemathesis, args, { cwd: reports, stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  child.stdout.on("data", (d) => { out += d; });
  child.stderr.on("data", (d) => { out += d; });
  child.on("exit", (c) => {
    writeFileSync(join(reports, "output.txt"), out);
    // The findings in full when something is new; the summary otherwise.
    const summary = out.search(/^=+ SUMMARY =+$/m);
    process.stdout.write(c === 0 && summary >= 0 ? out.slice(summary) : out);
    resolve(c);
  });
});
// The SDK's projections the run sent (fidelity_hooks.py puts one on a list
// query in ten), read back from the gateway's arrivals log: a run that
// sent none checked nothing of how they are answered.
const { arrivals } = await (await fetch(`${gateway.base}/__gateway/arrivals?contains=${encodeURIComponent("\"commandId\"]")}`)).json();
const projected = arrivals.filter((a) => a.path.endsWith("/event/list")).length;
await gateway.stop();
const reportFile = readdirSync(reports).find((f) => f.startsWith("json-"));
const report = reportFile ? JSON.parse(readFileSync(join(reports, reportFile), "utf8")) : null;
const baseline = report?.baseline ?? {};
const cases = report?.test_cases ?? {};
console.log(`fidelity: the whole output in ${join(reports, "output.txt")}`);
console.log(`fidelity: ${cases.generated ?? "?"} cases over ${report?.operations?.selected ?? "?"} operations in ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
  `${baseline.known ?? 0} known departures seen, ${baseline.new ?? 0} new findings; ${projected} list queries with the SDK's projection`);
if (projected === 0) {
  console.error("fidelity: no list query with the SDK's projection was sent: the run covered none (fidelity_hooks.py adds them)");
  process.exit(1);
}
if (values.record) {
  console.log(`recorded every finding of this run into ${join(reports, "recorded.json")}: review each, add why and wow, and merge into departures.json`);
}
if (code !== 0) {
  console.error(`fidelity: schemathesis exited ${code}: a finding that is not in tests/gateway/fidelity/departures.json (above). ` +
    "Fix the gateway where it differs from Wow; otherwise add the entry with why and the Wow source that shows the behaviour.");
}
process.exit(values.record ? 0 : code);
