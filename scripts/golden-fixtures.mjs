#!/usr/bin/env node
// Writes the golden fixtures of the stored format this build writes, into a
// new folder under tests/fixtures/golden/, and never touches an existing one:
// what a build stored is read by every later build, so a fixture only grows.
// Refuses when a folder already holds this build's schema versions.
//
//   node scripts/golden-fixtures.mjs [--at REV] [--out DIR]
//     --at REV   written by REV's package (scripts/build-at.sh, kept in target/builds/),
//                not this checkout's: what an older build stored
//     --out DIR  a trial run, written elsewhere
//
// The package (pkg/, built first, or REV's) in Chromium against a fresh test gateway:
// tests/golden/write.mjs writes intents in every state and effect records in
// IndexedDB, localStorage and a caller's adapter, adds damaged entries raw,
// and dumps each store as it holds them; it also derives the requestIds and
// payload fingerprints of tests/golden/cases.mjs. The check is
// tests/golden/golden.test.mjs (engines, Node) and crates/core/src/golden.rs.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "../tests/support/browser.mjs";
import { root, startGateway } from "../tests/support/gateway.mjs";
import { kinds } from "../tests/golden/stores.mjs";

const golden = join(root, "tests/fixtures/golden");
const argv = process.argv.slice(2);
const out = argv.includes("--out") ? argv[argv.indexOf("--out") + 1] : null;

const at = argv.includes("--at") ? argv[argv.indexOf("--at") + 1] : null;
const git = (...args) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
// The schema versions of the build that writes: this checkout's, or REV's.
const constant = (file, name) => {
  const source = at ? git("show", `${at}:${file}`) : readFileSync(join(root, file), "utf8");
  const m = new RegExp(`pub const ${name}: u32 = (\\d+);`).exec(source);
  if (!m) throw new Error(`${name} not found in ${file}`);
  return Number(m[1]);
};
const schema = {
  intents: constant("crates/core/src/journal/record.rs", "SCHEMA_VERSION"),
  effects: constant("crates/core/src/consumer/record.rs", "EFFECT_SCHEMA_VERSION"),
};

const versions = existsSync(golden) ? readdirSync(golden).filter((d) => /^v\d+$/.test(d)).sort((a, b) => a.slice(1) - b.slice(1)) : [];
for (const v of versions) {
  const meta = JSON.parse(readFileSync(join(golden, v, "meta.json"), "utf8"));
  if (meta.schema.intents === schema.intents && meta.schema.effects === schema.effects && !out) {
    console.error(`tests/fixtures/golden/${v} already holds intent schema ${schema.intents} and effect schema ${schema.effects}: ` +
      "fixtures are never rewritten. A changed stored format gets a new schema version (and a migration), then new fixtures.");
    process.exit(1);
  }
}
const name = `v${versions.length + 1}`;
const dir = out ?? join(golden, name);
let pkg = join(root, "pkg");
if (at) {
  pkg = join(root, "target/builds", git("rev-parse", `${at}^{commit}`));
  if (!existsSync(join(pkg, "index.js"))) execFileSync("scripts/build-at.sh", [at, pkg], { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
} else {
  execFileSync("scripts/build.sh", { cwd: root, stdio: ["ignore", "ignore", "inherit"] });
}
execFileSync("cargo", ["build", "-q", "-p", "wow-test-gateway"], { cwd: root, stdio: "inherit" });
const www = mkdtempSync(join(tmpdir(), "wow-golden-"));
cpSync(join(root, "tests/golden"), www, { recursive: true });
writeFileSync(join(www, "index.html"), "<!doctype html><title>golden fixtures</title>");
const browser = await launchChromium();
// A fresh gateway per page: no fault or held request of one reaches the next.
const onGateway = async (f) => {
  const gateway = await startGateway({ www, pkg, quiet: true });
  const page = await (await browser.newContext()).newPage();
  page.on("pageerror", (e) => console.error("page error:", e.message));
  try {
    await page.goto(`${gateway.base}/`);
    return await f(page);
  } finally {
    await page.close();
    await gateway.stop();
  }
};
try {
  mkdirSync(dir, { recursive: true });
  const write = (file, value) => {
    writeFileSync(join(dir, file), `${JSON.stringify(value, null, 1)}\n`);
    console.log(`${join(dir, file)}`);
  };
  const rev = git("rev-parse", "--short", at ?? "HEAD");
  write("meta.json", { schema, writtenBy: rev, engine: "chromium", date: new Date().toISOString().slice(0, 10) });
  write("request-ids.json", await onGateway((page) => page.evaluate(async () => (await import("/write.mjs")).deriveIds())));
  const namespace = "golden-fingerprints";
  write("fingerprints.json", { namespace, cases: await onGateway((page) =>
    page.evaluate(async (ns) => (await import("/write.mjs")).fingerprints(ns), namespace)) });
  for (const [kind, file] of Object.entries(kinds)) {
    write(`${file}.json`, await onGateway((page) => page.evaluate(async (a) => (await import("/write.mjs")).writeStore(a),
      { kind, namespace: `golden-${file}` })));
  }
} finally {
  await browser.close();
}

if (!out) {
  // The manifest pins every fixture's bytes; a new folder appends its lines.
  const lines = readdirSync(dir).sort().map((f) => `${createHash("sha256").update(readFileSync(join(dir, f))).digest("hex")}  ${name}/${f}`);
  const manifest = join(golden, "MANIFEST");
  writeFileSync(manifest, `${existsSync(manifest) ? readFileSync(manifest, "utf8") : ""}${lines.join("\n")}\n`);
  console.log(`${manifest}: ${lines.length} lines added`);
}
