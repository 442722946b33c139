// What the SDK's base crates cost before any SDK logic: the smallest useful
// command client (bench/floor/) built with the base crates as chosen, without
// serde-wasm-bindgen, and without it and gloo-net; each run through
// wasm-bindgen (web target) and measured like the SDK (wasm + glue, gzip -9),
// side by side with the SDK's size budget. Then the floor of the SDK's own
// core (`coreFloor`): the shipped client module with every function of the
// browser and API layers emptied, so only the pure core and the base crates'
// code those layers call remain; what no layer above the core could go below.
//
//   node bench/floor.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sections } from "../scripts/wasm-sections.mjs";
import { budget as sizeBudget, kb, measure, table } from "./size.mjs";

const root = new URL("..", import.meta.url).pathname;
const crate = join(root, "bench/floor");
const budget = sizeBudget.targetGzipBytes;

const variants = [
  { name: "base crates as chosen (serde-wasm-bindgen + gloo-net)", features: "serde-wasm-bindgen,gloo-net" },
  { name: "without serde-wasm-bindgen (Reflect reads, gloo-net fetch)", features: "gloo-net" },
  { name: "without serde-wasm-bindgen and gloo-net (js-sys fetch)", features: "" },
];

export function floor() {
  return variants.map((v) => {
    execFileSync("cargo", ["build", "-q", "--release", "--target", "wasm32-unknown-unknown",
      "--no-default-features", ...(v.features ? ["--features", v.features] : [])], { cwd: crate, stdio: "inherit" });
    const out = mkdtempSync(join(tmpdir(), "wow-floor-"));
    execFileSync("wasm-bindgen", ["--target", "web", "--out-dir", out,
      join(crate, "target/wasm32-unknown-unknown/release/wow_size_floor.wasm")], { stdio: ["ignore", "ignore", "ignore"] });
    const gz = (file) => measure(readFileSync(join(out, file))).gzip;
    const wasm = gz("wow_size_floor_bg.wasm");
    const glue = gz("wow_size_floor.js");
    return { variant: v.name, wasm, glue, total: wasm + glue };
  });
}

export function floorTable(rows) {
  return table(rows, [
    ["smallest client (send, persist, check)", (r) => r.variant],
    ["wasm gzip", (r) => kb(r.wasm)],
    ["glue gzip", (r) => kb(r.glue)],
    ["total gzip", (r) => kb(r.total)],
    ["of the budget", (r) => `${(r.total / budget).toFixed(2)}×`],
  ]);
}

/** Builds the shipped client module with its names kept (scripts/build.sh's
 * toolchain and flags, profile size-report); returns its path. */
export function sizeReportModule() {
  const release = readFileSync(join(root, "scripts/release-toolchain.sh"), "utf8");
  const toolchain = /RELEASE_TOOLCHAIN=(\S+)/.exec(release)[1];
  const rustflags = /RELEASE_RUSTFLAGS="([^"]+)"/.exec(release)[1];
  const buildStd = /RELEASE_BUILD_STD="([^"]+)"/.exec(release)[1].split(" ");
  execFileSync("cargo", ["build", "-q", "--profile", "size-report", "--target", "wasm32-unknown-unknown", "--lib",
    ...buildStd, "--target-dir", "target/release-wasm"], { cwd: root, stdio: "inherit",
    env: { ...process.env, RUSTUP_TOOLCHAIN: toolchain, RUSTFLAGS: rustflags } });
  return join(root, "target/release-wasm/wasm32-unknown-unknown/size-report/wow_command_client.wasm");
}

// ---- the core's floor --------------------------------------------------------
const binaryen = (tool, args) => execFileSync(join(root, "node_modules/.bin", tool), ["--all-features", ...args]);
// The browser layer (src/web), the API layer (src/js) and wasm-bindgen's
// export shims of the WowClient class.
const layers = /^<?wow_command_client::(web|js)::|^(__wbg_)?wowclient_/;
// What those layers call that stays whatever the layers are written in: the
// pure core and the base crates in the roles they were chosen for.
const kept = /^[<&]*(mut )?<?(wow_command_client::core|gloo_net|serde_wasm_bindgen|uuid|sha1_smol)::/;
const funcName = (line) => /^ \(func \$("(?:[^"\\]|\\.)*"|\S+)/.exec(line)?.[1];
const plain = (name) => name.replace(/^"|"$/g, "").replace(/\[[0-9a-f]+\]/g, "");

/** Empties the layers' functions in a module's text; exports what they call of `kept`. */
export function withoutLayers(wat) {
  const lines = wat.split("\n"), out = [], calls = new Set();
  const emptied = new Set(lines.map(funcName).filter((n) => n && layers.test(plain(n))));
  let inside = false;
  for (const line of lines) {
    const name = funcName(line);
    if (inside && (name || /^ \((?!func )/.test(line) || line === ")")) { out.push("  (unreachable)", " )"); inside = false; }
    if (name && emptied.has(name)) { inside = true; out.push(line); continue; }
    if (!inside) { out.push(line); continue; }
    for (const [, callee] of line.matchAll(/\((?:call|return_call|ref\.func) \$("(?:[^"\\]|\\.)*"|[^\s)]+)/g)) {
      if (!emptied.has(callee) && kept.test(plain(callee))) calls.add(callee);
    }
  }
  out.splice(out.lastIndexOf(")"), 0, ...[...calls].map((c, i) => ` (export "core${i}" (func $${c}))`));
  return { wat: out.join("\n"), emptied: emptied.size, calls: calls.size };
}

/** The client module as shipped and without its layers, each with unused code dropped and names stripped. */
export function coreFloor(namedWasm) {
  const dir = mkdtempSync(join(tmpdir(), "wow-core-floor-"));
  execFileSync("wasm-bindgen", ["--target", "web", "--out-dir", dir, "--out-name", "m", namedWasm], { stdio: ["ignore", "ignore", "ignore"] });
  binaryen("wasm-dis", [join(dir, "m_bg.wasm"), "-o", join(dir, "m.wat")]);
  const cut = withoutLayers(readFileSync(join(dir, "m.wat"), "utf8"));
  writeFileSync(join(dir, "core.wat"), cut.wat);
  binaryen("wasm-as", [join(dir, "core.wat"), "-o", join(dir, "core.wasm")]);
  const shrink = (from, to) => {
    binaryen("wasm-opt", ["--remove-unused-module-elements", "--strip-debug", "--strip-producers", join(dir, from), "-o", join(dir, to)]);
    const bytes = readFileSync(join(dir, to));
    const part = (id) => sections(bytes).find((s) => s.id === id);
    const gz = (s) => (s ? measure(bytes.subarray(s.start, s.start + s.size)).gzip : 0);
    return { total: measure(bytes).gzip, code: gz(part(10)), data: gz(part(11)) };
  };
  return { shipped: shrink("m_bg.wasm", "shipped.wasm"), core: shrink("core.wasm", "floor.wasm"), emptied: cut.emptied, calls: cut.calls };
}

export function coreFloorTable(f) {
  const rows = [
    { variant: "the client module as shipped", ...f.shipped },
    { variant: `without the browser and API layers (${f.emptied} functions emptied, ${f.calls} core and crate functions they call kept)`, ...f.core },
  ];
  return table(rows, [
    ["module (unused code dropped, stripped)", (r) => r.variant],
    ["code gzip", (r) => kb(r.code)],
    ["data gzip", (r) => kb(r.data)],
    ["wasm gzip", (r) => kb(r.total)],
    ["of the budget", (r) => `${(r.total / budget).toFixed(2)}×`],
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`Size floor of the base crates (budget ${kb(budget)} gzip, wasm + glue)\n`);
  console.log(floorTable(floor()));
  console.log("\nThe core's floor: the .wasm alone, before any glue, snippet or layer above the core\n");
  console.log(coreFloorTable(coreFloor(sizeReportModule())));
}
