// Empties the closure shims wasm-bindgen keeps for nothing. Every
// `&dyn Fn…`/`&mut dyn FnMut…` that an imported function of js-sys takes has a
// describe function naming its invoke shim (`inform(invoke::<…> as u32)`),
// which puts the shim in the function table; wasm-bindgen reads the describe
// functions, drops them, and keeps the whole table. A shim a binding uses is
// called by the glue through an export of its own; one nobody exports is
// reachable from nothing (the table is not exported, and Rust code never
// calls a shim through it), yet binaryen keeps it because its table slot
// does: about 2 KB of code for js-sys's typed arrays, iterators and promises
// the module never uses (wasm-bindgen issue #2535). js-sys's JSPI task waker
// is kept the same way where the module has no JSPI (below). Each such body
// becomes `unreachable`, and every slot that held one holds the first of
// them, so binaryen drops the rest. Every other byte of the module is left
// as it is. Run on wasm-bindgen's output while it still has the crate's
// names (the release build keeps them until scripts/strip-wasm.mjs drops
// them).
//
//   node scripts/drop-closure-shims.mjs pkg/wow_command_client_bg.wasm
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { functionNames, importedFunctions, leb, sections, uleb } from "./wasm-sections.mjs";

const path = process.argv[2];
const bytes = readFileSync(path);
const all = sections(bytes);
const at = (name) => all.find((s) => s.name === name);
const text = (p) => { const [n, q] = leb(bytes, p); return [new TextDecoder().decode(bytes.subarray(q, q + n)), q + n]; };
const vec = (section, each) => { let [n, p] = leb(bytes, section.start); for (let i = 0; i < n; i++) p = each(p); };

// Functions are numbered imports first.
const imported = importedFunctions(bytes);
const exported = new Set(), exportNames = new Set();
vec(at("export"), (p) => { let name; [name, p] = text(p); exportNames.add(name); const kind = bytes[p++]; let index; [index, p] = leb(bytes, p); if (kind === 0) exported.add(index); return p; });
// The table's functions: active segments of function indices, as wasm-bindgen
// writes them, each kept as its head (kind and offset) and its indices.
const segments = [];
vec(at("element"), (p) => {
  const from = p;
  let flags; [flags, p] = leb(bytes, p);
  if (flags !== 0) throw new Error(`${path}: element segment of kind ${flags}`);
  // Its offset: `i32.const N` `end`.
  if (bytes[p] !== 0x41) throw new Error(`${path}: element segment offset is not a constant`);
  while (bytes[++p] & 0x80);
  if (bytes[++p] !== 0x0b) throw new Error(`${path}: element segment offset is not a constant`);
  const head = bytes.subarray(from, p + 1);
  let n; [n, p] = leb(bytes, p + 1);
  const indices = [];
  for (let i = 0; i < n; i++) { let f; [f, p] = leb(bytes, p); indices.push(f); }
  segments.push({ head, indices });
  return p;
});
const inTable = new Set(segments.flatMap((s) => s.indices));
const names = functionNames(bytes);
if (!names) throw new Error(`${path}: no name section: build it with its names`);
// What the code calls or takes a reference to by name (binaryen's text of the
// module): a shim wasm-bindgen wraps (the externref shim of an exported
// closure calls the one in the table) is called, and kept.
const wasmDis = new URL("../node_modules/.bin/wasm-dis", import.meta.url).pathname;
const wat = execFileSync(wasmDis, [path], { maxBuffer: 1 << 30, encoding: "utf8" });
const used = new Set([...wat.matchAll(/\((?:call|return_call|ref\.func) \$(?:"([^"]*)"|([^\s)]+))/g)].map((m) => m[1] ?? m[2]));
const seen = new Map();
for (const n of names.values()) seen.set(n, (seen.get(n) ?? 0) + 1);
const shim = /^wasm_bindgen(\[[0-9a-f]+\])?::convert::closures::_::invoke::</;
// js-sys's JSPI task waker: its vtable sits in the table, but only a JSPI
// task's poll makes a waker of it, and that poll is entered only through the
// export `__wbg_jspi_task_poll`, which wasm-bindgen deletes from a module
// without JSPI exports (stubbing out the spawn intrinsics with it).
const jspiOff = !exportNames.has("__wbg_jspi_task_poll");
const waker = /^js_sys(\[[0-9a-f]+\])?::futures::jspi::task_waker::raw_/;
const dead = new Set([...inTable].filter((f) => {
  const n = names.get(f) ?? "";
  return (shim.test(n) || (jspiOff && waker.test(n))) && !exported.has(f) && !used.has(n) && seen.get(n) === 1;
}));
if (![...inTable].some((f) => shim.test(names.get(f) ?? ""))) throw new Error(`${path}: no closure shim in the table by name`);

// The code section again, each dead body replaced by `unreachable`.
const code = at("code");
const bodies = [];
let [count, p] = leb(bytes, code.start);
const head = bytes.subarray(code.start, p);
for (let i = 0; i < count; i++) {
  const from = p; let size; [size, p] = leb(bytes, p);
  // No locals, `unreachable`, `end`.
  bodies.push(dead.has(imported + i) ? Buffer.from([3, 0, 0x00, 0x0b]) : bytes.subarray(from, p + size));
  p += size;
}
const content = Buffer.concat([head, ...bodies]);
// The table's slots of every dead function then name one of them: the rest
// are reached from nothing, and binaryen drops them (a slot nothing calls
// may hold a function of any type).
const [one] = dead;
const table = Buffer.concat([uleb(segments.length), ...segments.flatMap(({ head, indices }) =>
  [head, uleb(indices.length), ...indices.map((f) => uleb(dead.has(f) ? one : f))])]);
const rebuilt = (s) => s === code ? [Buffer.from([10]), uleb(content.length), content]
  : s.name === "element" ? [Buffer.from([9]), uleb(table.length), table] : [bytes.subarray(s.from, s.start + s.size)];
const out = Buffer.concat([bytes.subarray(0, 8), ...all.flatMap(rebuilt)]);
await WebAssembly.compile(out);
writeFileSync(path, out);
console.error(`${path}: ${dead.size} unexported closure shims${jspiOff ? " and JSPI wakers" : ""} emptied`);
// `VERBOSE=1` lists them.
if (process.env.VERBOSE) for (const f of dead) console.error("  ", names.get(f));
