// What a web app downloads for the SDK (the .wasm, the JS glue and its
// snippets, the entry): raw, gzip and brotli, what the bytes are (wasm
// sections, and by crate and function from an unstripped build's names), and
// the budget check `npm test` runs.
//
//   node bench/size.mjs [--check] [--names target/…/unstripped.wasm]
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { functionNames, importedFunctions, leb, sections } from "../scripts/wasm-sections.mjs";

const root = new URL("..", import.meta.url).pathname;
const pkg = join(root, "pkg");
export const budget = JSON.parse(readFileSync(join(root, "bench/size-budget.json"), "utf8"));
const args = process.argv.slice(2);

// What a browser loads for an app that imports one entry: the entry, its glue,
// the snippets the glue imports and those they import in turn, and its module.
const apps = {
  client: { entry: "index.js", glue: "wow_command_client.js", wasm: "wow_command_client_bg.wasm" },
  consumer: { entry: "consumer-web.js", glue: "consumer.js", wasm: "consumer_bg.wasm" },
};
function shippedBy(app) {
  const snippets = new Set();
  const follow = (file) => {
    const text = readFileSync(join(pkg, file), "utf8");
    for (const [, path] of text.matchAll(/from\s*['"](\.\.?\/[^'"]+\.js)['"]/g)) {
      const found = join(dirname(file), path);
      if (!found.startsWith("snippets/") || snippets.has(found)) continue;
      snippets.add(found);
      follow(found);
    }
  };
  follow(app.glue);
  return [app.entry, app.glue, ...snippets, app.wasm];
}

export const measure = (bytes) => ({
  raw: bytes.length,
  gzip: gzipSync(bytes, { level: 9 }).length,
  brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
});
export const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

function total(files) {
  const rows = files.map((file) => ({ file, ...measure(readFileSync(join(pkg, file))) }));
  const sum = (list, k) => list.reduce((a, r) => a + r[k], 0);
  const wasm = rows.filter((r) => r.file.endsWith(".wasm"));
  const js = rows.filter((r) => r.file.endsWith(".js"));
  return { rows, wasm: { raw: sum(wasm, "raw"), gzip: sum(wasm, "gzip") }, js: { raw: sum(js, "raw"), gzip: sum(js, "gzip") },
    total: { raw: sum(rows, "raw"), gzip: sum(rows, "gzip"), brotli: sum(rows, "brotli") } };
}

/** The download of an app that uses WowClient only (the gate), of one that uses the consumer only, and of both. */
export function sizes() {
  const client = total(shippedBy(apps.client));
  const consumer = total(shippedBy(apps.consumer));
  const both = total([...new Set([...shippedBy(apps.client), ...shippedBy(apps.consumer)])]);
  // The React entry on top of the client (React itself is the app's).
  const react = total([...shippedBy(apps.client), "react.js"]);
  // The devtools panel: its own entry, downloaded only by an app that imports it.
  const devtools = total(["devtools.js"]);
  return { ...client, consumer, both, react, devtools };
}

// ---- wasm structure -------------------------------------------------------
/** Function body sizes by name, from a module that still has its name section. */
export function functions(bytes) {
  const code = sections(bytes).find((s) => s.name === "code");
  const fnNames = functionNames(bytes);
  if (!code || !fnNames) return null;
  const importedFns = importedFunctions(bytes);
  const bodies = [];
  let [count, p] = leb(bytes, code.start);
  for (let i = 0; i < count; i++) {
    let size;
    [size, p] = leb(bytes, p);
    bodies.push({ name: fnNames.get(importedFns + i) ?? `func[${importedFns + i}]`, size });
    p += size;
  }
  return bodies;
}

/** The crate a (legacy- or v0-mangled, or demangled) symbol belongs to. */
export function crateOf(name) {
  let m = /^_ZN(\d+)/.exec(name);
  if (m) {
    const n = Number(m[1]);
    const first = name.slice(3 + m[1].length, 3 + m[1].length + n);
    // `<T as Trait>` impls: the implementing type's crate is inside.
    if (first.startsWith("_$LT$")) {
      const inner = /^_\$LT\$([a-z0-9_]+)\.\./.exec(first);
      return inner ? inner[1] : "impls";
    }
    return first;
  }
  // v0 mangling: the first crate root, `C<disambiguator>_<len><name>`.
  m = /^_R.*?C(?:s[0-9A-Za-z]*_)?(\d+)([a-z_][a-z0-9_]*)/.exec(name);
  if (m) return m[2].slice(0, Number(m[1]));
  m = /^([a-z0-9_]+)::/.exec(name);
  if (m) return m[1];
  m = /^<([a-z0-9_]+)::/.exec(name);
  if (m) return m[1];
  return name.startsWith("__wbg") || name.startsWith("__wbindgen") ? "wasm-bindgen glue" : "other";
}

/** A plain-text table: the first column left-aligned, the rest right-aligned. */
export function table(rows, columns) {
  const widths = columns.map(([h, f]) => Math.max(h.length, ...rows.map((r) => String(f(r)).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ");
  return [line(columns.map(([h]) => h)), ...rows.map((r) => line(columns.map(([, f]) => f(r))))].join("\n");
}

export function report(namesPath) {
  const s = sizes();
  const out = [];
  const columns = [["file", (r) => r.file], ["raw", (r) => kb(r.raw)], ["gzip", (r) => kb(r.gzip)], ["brotli", (r) => kb(r.brotli)]];
  out.push("Size: what a web app that uses WowClient only downloads (pkg/, web target)");
  out.push(table([...s.rows, { file: "total", ...s.total }], columns));
  out.push(`target: ${kb(budget.targetGzipBytes)} gzip in total; now ${kb(s.total.gzip)} (${(s.total.gzip / budget.targetGzipBytes).toFixed(2)}× the target)`);
  out.push(`gate (npm test): at most ${kb(budget.ceilingGzipBytes)} gzip: ${s.total.gzip <= budget.ceilingGzipBytes ? "within" : "OVER"}`);
  out.push("\nAn app that uses IdempotentConsumer only (the ./consumer entry)");
  out.push(table([...s.consumer.rows, { file: "total", ...s.consumer.total }], columns));
  out.push(`gate (npm test): at most ${kb(budget.consumerCeilingGzipBytes)} gzip: ${s.consumer.total.gzip <= budget.consumerCeilingGzipBytes ? "within" : "OVER"}`);
  out.push("\nper app          gzip     brotli");
  for (const [name, t] of [["WowClient only", s.total], ["consumer only", s.consumer.total], ["both", s.both.total],
    ["client + react", s.react.total]]) {
    out.push(`${name.padEnd(15)} ${kb(t.gzip).padStart(8)} ${kb(t.brotli).padStart(10)}`);
  }
  const reactEntry = s.react.rows.find((r) => r.file === "react.js");
  out.push(`client + react: WowClient with the react entry (React itself not counted); the entry alone: ${reactEntry.gzip} B gzip, ${reactEntry.brotli} B brotli`);
  out.push(`the devtools panel (./devtools, on top of the client; nothing for an app that does not import it): ${s.devtools.total.gzip} B gzip, ${s.devtools.total.brotli} B brotli (gate ${budget.devtoolsCeilingGzipBytes})`);
  const wasmBytes = readFileSync(join(pkg, "wow_command_client_bg.wasm"));
  out.push("\nwasm sections");
  out.push(table(sections(wasmBytes).map((x) => ({ ...x, share: x.size / wasmBytes.length })), [
    ["section", (r) => r.name], ["bytes", (r) => r.size], ["share", (r) => `${(r.share * 100).toFixed(1)} %`]]));
  if (namesPath) {
    // wasm-bindgen's describe shims are interpreted and dropped by the CLI.
    const fns = functions(readFileSync(namesPath))?.filter((f) => !f.name.includes("__wbindgen_describe"));
    if (fns) {
      const total = fns.reduce((a, f) => a + f.size, 0);
      const byCrate = new Map();
      for (const f of fns) byCrate.set(crateOf(f.name), (byCrate.get(crateOf(f.name)) ?? 0) + f.size);
      out.push("\ncode by crate (unstripped build, before wasm-bindgen)");
      out.push(table([...byCrate].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([crate, size]) => ({ crate, size })), [
        ["crate", (r) => r.crate], ["bytes", (r) => r.size], ["share", (r) => `${(100 * r.size / total).toFixed(1)} %`]]));
      out.push("\nlargest functions");
      out.push(table(fns.sort((a, b) => b.size - a.size).slice(0, 12), [
        ["function", (r) => r.name.slice(0, 90)], ["bytes", (r) => r.size]]));
    }
  }
  return { text: out.join("\n"), sizes: s };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const namesAt = args.indexOf("--names");
  const { text, sizes: s } = report(namesAt >= 0 ? args[namesAt + 1] : undefined);
  console.log(text);
  if (args.includes("--check")) {
    const over = [["WowClient only", s.total.gzip, budget.ceilingGzipBytes],
      ["consumer only", s.consumer.total.gzip, budget.consumerCeilingGzipBytes],
      ["the devtools panel", s.devtools.total.gzip, budget.devtoolsCeilingGzipBytes]].filter(([, n, max]) => n > max);
    for (const [name, n, max] of over) console.error(`size: ${name}: ${n} bytes gzip is over the gate of ${max} (bench/size-budget.json)`);
    if (over.length) process.exit(1);
    console.log(`size: WowClient only ${s.total.gzip} bytes gzip (gate ${budget.ceilingGzipBytes}), consumer only ${s.consumer.total.gzip} (gate ${budget.consumerCeilingGzipBytes}), devtools ${s.devtools.total.gzip} (gate ${budget.devtoolsCeilingGzipBytes})`);
  }
}
