// Where the client module's code goes, by layer and by whether a function is
// an async state machine or a closure (its name ends in `{closure#N}`) or
// plain code: the table issue 50 asked for, read from a build that keeps
// its names (bench/named-pkg.sh DIR builds one).
//
//   node bench/layers.mjs [DIR]   (default: target/named-pkg, built if missing)
//
// A generic of one layer instantiated with another's type counts where its
// code is written (the first module path of its name): the journal's
// `in_scope` over the web's store is the core's.
import { existsSync, readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { crateOf, functions, table } from "./size.mjs";

const root = new URL("..", import.meta.url).pathname;

/** The layer a function's code belongs to. */
export function layerOf(name) {
  // The leading path: `<Type as Trait>::f` and `<Type>::f` are Type's; a
  // primitive's or a tuple's impl of a trait is the trait's; `<str>::f`, std's.
  const path = /^<*&?(?:mut )?([a-z0-9_]+)(?:\[[0-9a-f]+\])?::([a-z0-9_]+)/;
  let lead = path.exec(name);
  if (!lead && name.startsWith("<")) {
    const trait = / as (.*)$/.exec(name);
    lead = trait ? path.exec(trait[1]) : null;
    if (!lead) return "std, alloc";
  }
  const crate = lead ? lead[1] : crateOf(name);
  if (crate === "wow_command_client") return ["core", "web", "js"].includes(lead[2]) ? lead[2] : "other crates";
  if (["std", "alloc", "core"].includes(crate)) return "std, alloc";
  if (/^(wasm_bindgen|js_sys|web_sys|gloo|wasm-bindgen glue)/.test(crate)) return "wasm-bindgen, js-sys";
  return "other crates";
}

/** Whether a function is an async state machine or a closure (the `{closure#N}` of its name). */
export const isAsync = (name) => /\{closure#\d+\}$/.test(name) || /\{closure#\d+\}(::|>)/.test(name);

/** Bytes of code by layer, plain and async; the whole when `fns` is a function list. */
export function byLayer(fns) {
  const order = ["core", "web", "js", "std, alloc", "wasm-bindgen, js-sys", "other crates"];
  const rows = new Map(order.map((layer) => [layer, { layer, plain: 0, async: 0 }]));
  for (const f of fns) {
    const row = rows.get(layerOf(f.name));
    row[isAsync(f.name) ? "async" : "plain"] += f.size;
  }
  const total = fns.reduce((a, f) => a + f.size, 0);
  return { rows: [...rows.values()].map((r) => ({ ...r, together: r.plain + r.async })), total };
}

export function layersReport(wasmPath) {
  const fns = functions(readFileSync(wasmPath))?.filter((f) => !f.name.includes("__wbindgen_describe"));
  if (!fns) throw new Error(`${wasmPath} has no name section: build it with bench/named-pkg.sh`);
  const { rows, total } = byLayer(fns);
  const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
  const pct = (n) => `${((100 * n) / total).toFixed(0)} %`;
  const out = [`code by layer (${wasmPath}: ${total} B of code, before wasm-opt)`];
  out.push(table([...rows, { layer: "total", plain: rows.reduce((a, r) => a + r.plain, 0),
    async: rows.reduce((a, r) => a + r.async, 0), together: total }], [
    ["layer", (r) => r.layer], ["plain", (r) => kb(r.plain)], ["async/closures", (r) => kb(r.async)],
    ["together", (r) => `${kb(r.together)} (${pct(r.together)})`]]));
  const thin = rows.filter((r) => r.layer === "web" || r.layer === "js").reduce((a, r) => a + r.together, 0);
  const futures = rows.filter((r) => r.layer === "web" || r.layer === "js").reduce((a, r) => a + r.async, 0);
  out.push(`web + js: ${kb(thin)} (${pct(thin)}); their async state machines and closures: ${kb(futures)}`);
  out.push("\nlargest async state machines and closures");
  out.push(table(fns.filter((f) => isAsync(f.name)).sort((a, b) => b.size - a.size).slice(0, 10).map((f) => ({
    name: f.name.replace(/\[[0-9a-f]{16}\]/g, "").slice(0, 100), size: f.size })), [["function", (r) => r.name], ["bytes", (r) => r.size]]));
  return { text: out.join("\n"), rows, total };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2] ?? join(root, "target/named-pkg");
  const wasm = join(dir, "wow_command_client_bg.wasm");
  if (!existsSync(wasm)) execFileSync(join(root, "bench/named-pkg.sh"), [dir], { stdio: "inherit" });
  console.log(layersReport(wasm).text);
}
