// Minifies the package's browser JavaScript in place: the wasm-bindgen glue
// and the snippets it imports. Every byte of them is downloaded on every cold
// load, and their comments (which say why, for readers of the sources) are
// most of what minification removes. Export names, property names and class
// names are kept: the entries import the glue's exports by name, the glue
// reaches its imports by property, and error classes keep their names.
//   node scripts/minify-js.mjs FILE...
import { readFileSync, writeFileSync } from "node:fs";
import { minify } from "terser";

let before = 0, after = 0;
for (const file of process.argv.slice(2)) {
  const code = readFileSync(file, "utf8");
  const out = await minify(code, {
    module: true,
    ecma: 2020,
    compress: { passes: 2 },
    mangle: true,
    keep_classnames: true,
    // Short lines: an engine that prints the line of an error (Node's
    // "Exception in PromiseRejectCallback", a stack trace's excerpt) prints
    // at most a thousand characters, not the whole bundled glue.
    format: { comments: false, max_line_len: 1000 },
  });
  writeFileSync(file, out.code);
  before += code.length;
  after += out.code.length;
}
console.error(`minified ${process.argv.length - 2} files: ${before} → ${after} bytes`);
