// What the SDK's base crates cost before any SDK logic: the smallest useful
// command client (bench/floor/) built with the base crates as chosen, without
// serde-wasm-bindgen, and without it and gloo-net; each run through
// wasm-bindgen (web target) and measured like the SDK (wasm + glue, gzip -9),
// side by side with the SDK's size budget.
//
//   node bench/floor.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(`Size floor of the base crates (budget ${kb(budget)} gzip, wasm + glue)\n`);
  console.log(floorTable(floor()));
}
