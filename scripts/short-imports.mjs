// Gives the module's imports from its own glue short names, in the .wasm and
// in the glue alike. wasm-bindgen names each one `__wbg_<name>_<16 hex
// digits>`: about a hundred of them, each written twice (the import section
// and the glue's import object), and their hash digits are what gzip cannot
// shrink. The snippets' imports keep their names (their exports are theirs).
// The module's function and table exports, which only the glue reads (as
// `wasm.<name>`), get short names too; `memory` and the globals keep theirs.
// Refuses, changing nothing, unless every renamed import is found exactly
// once in the glue as a key, and every renamed export only as a property.
//
//   node scripts/short-imports.mjs pkg/wow_command_client_bg.wasm pkg/wow_command_client.js
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { leb, sections, uleb } from "./wasm-sections.mjs";

const [wasmPath, gluePath] = process.argv.slice(2);
const bytes = readFileSync(wasmPath);
let glue = readFileSync(gluePath, "utf8");
const own = `./${basename(gluePath).replace(/\.js$/, "")}_bg.js`;

const name = (s) => { const b = Buffer.from(s, "utf8"); return Buffer.concat([uleb(b.length), b]); };

/** The n-th short name: a … z, A … Z, then two letters and so on. */
function short(n) {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  let s = "";
  do { s = letters[n % 52] + s; n = Math.floor(n / 52) - 1; } while (n >= 0);
  return s;
}

const section = sections(bytes).find((s) => s.name === "import");
let at = section.start;
const end = section.start + section.size;
let count;
[count, at] = leb(bytes, at);
const readName = () => {
  let len;
  [len, at] = leb(bytes, at);
  const s = bytes.subarray(at, at + len).toString("utf8");
  at += len;
  return s;
};
const limits = () => {
  const flags = bytes[at++];
  [, at] = leb(bytes, at);
  if (flags & 1) [, at] = leb(bytes, at);
};
const parts = [uleb(count)];
const renamed = new Map();
// Each snippet module's path (`./snippets/<crate>-<hash>/src/…`, written
// once per import in the .wasm and as a key of the glue's import object,
// as often again) becomes a number; the glue's repeated keys go.
const snippets = new Map(), perModule = new Map();
for (let i = 0; i < count; i += 1) {
  const module = readName();
  const field = readName();
  const descFrom = at;
  const kind = bytes[at++];
  if (kind === 0) [, at] = leb(bytes, at); // function: type index
  else if (kind === 1) { at += 1; limits(); } // table: reference type, limits
  else if (kind === 2) limits(); // memory
  else if (kind === 3) at += 2; // global: value type, mutability
  else if (kind === 4) { at += 1; [, at] = leb(bytes, at); } // tag
  else throw new Error(`import ${module}.${field}: unknown kind ${kind}`);
  let newField = field;
  if (module === own) {
    newField = short(renamed.size);
    renamed.set(field, newField);
  }
  if (module.startsWith("./snippets/") && !snippets.has(module)) snippets.set(module, String(snippets.size));
  perModule.set(module, (perModule.get(module) ?? 0) + 1);
  parts.push(name(snippets.get(module) ?? module), name(newField), bytes.subarray(descFrom, at));
}
if (at !== end) throw new Error("the import section was not read to its end");

for (const [from, to] of renamed) {
  const key = new RegExp(`(?<![\\w$])${from}(?![\\w$])`, "g");
  const found = glue.match(key)?.length ?? 0;
  if (found !== 1 || !glue.includes(`${from}:`)) {
    throw new Error(`${from}: found ${found} times in ${gluePath}, not once as a key; nothing was changed`);
  }
  glue = glue.replace(`${from}:`, `${to}:`);
}

for (const [from, to] of snippets) {
  // The import object holds one key per import, all naming one namespace.
  const quoted = JSON.stringify(from);
  const key = new RegExp(`${quoted.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:([\\w$]+),?`, "g");
  const found = [...glue.matchAll(key)];
  if (found.length !== perModule.get(from) || glue.split(quoted).length - 1 !== found.length
    || new Set(found.map((m) => m[1])).size !== 1) {
    throw new Error(`${from}: not found in ${gluePath} as the key of its ${perModule.get(from)} imports; nothing was changed`);
  }
  let first = true;
  glue = glue.replace(key, (m, v) => (first ? ((first = false), `${JSON.stringify(to)}:${v}${m.endsWith(",") ? "," : ""}`) : ""));
}

const imports = Buffer.concat(parts);

// The exports: each a name, a kind (0 function, 1 table, 2 memory, 3 global)
// and an index.
const exportSection = sections(bytes).find((s) => s.name === "export");
at = exportSection.start;
[count, at] = leb(bytes, at);
const exportParts = [uleb(count)];
let renamedExports = 0;
for (let i = 0; i < count; i += 1) {
  const field = readName();
  const descFrom = at;
  const kind = bytes[at++];
  [, at] = leb(bytes, at);
  let newField = field;
  if (kind === 0 || kind === 1) {
    const any = glue.match(new RegExp(`(?<![\\w$])${field}(?![\\w$])`, "g"))?.length ?? 0;
    const asProperty = glue.match(new RegExp(`\\.${field}(?![\\w$])`, "g"))?.length ?? 0;
    if (any !== asProperty) throw new Error(`export ${field}: read ${any - asProperty} times otherwise than as a property; nothing was changed`);
    if (any > 0) {
      newField = `_${short(renamedExports++)}`;
      glue = glue.replace(new RegExp(`\\.${field}(?![\\w$])`, "g"), `.${newField}`);
    }
  }
  exportParts.push(name(newField), bytes.subarray(descFrom, at));
}
if (at !== exportSection.start + exportSection.size) throw new Error("the export section was not read to its end");
const exports = Buffer.concat(exportParts);

const rebuilt = [bytes.subarray(0, section.from), Buffer.from([2]), uleb(imports.length), imports,
  bytes.subarray(end, exportSection.from), Buffer.from([7]), uleb(exports.length), exports,
  bytes.subarray(exportSection.start + exportSection.size)];
const out = Buffer.concat(rebuilt);
await WebAssembly.compile(out);
writeFileSync(wasmPath, out);
writeFileSync(gluePath, glue);
console.error(`${basename(wasmPath)}: ${renamed.size} imports, ${snippets.size} snippet modules and ${renamedExports} exports renamed`);
