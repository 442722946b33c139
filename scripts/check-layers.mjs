// The layers of src/ hold: data flows js -> web -> core, never up. A file of
// `web` may not use `crate::js`, a file of `core` neither `crate::web` nor
// `crate::js`, and no JS helper of `web` may import one of `js`. Inside a
// layer, no two files hold each other, directly or round a longer circle
// (a module's mod.rs and its own files excepted: Rust declares them there).
//
//   node scripts/check-layers.mjs        (npm test runs it)
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { join, dirname, relative, normalize } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const src = join(root, "src");
const rank = { core: 1, web: 2, js: 3 };

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(rs|js)$/.test(name) ? [path] : [];
  });
}

const layerOf = (file) => relative(src, file).split("/")[0];

/** The file a module path (`crate::web::executor::Executor`) is in, by its longest existing prefix. */
function resolve(segments) {
  for (let n = segments.length; n > 0; n--) {
    const base = join(src, ...segments.slice(0, n));
    for (const candidate of [`${base}.rs`, join(base, "mod.rs")]) if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** The module path of a Rust file: src/web/executor.rs -> [web, executor]; a mod.rs is its folder. */
function modulePath(file) {
  const parts = relative(src, file).replace(/\.rs$/, "").split("/");
  if (parts.at(-1) === "mod" || parts.at(-1) === "lib") parts.pop();
  return parts;
}

// Comments and strings say nothing about imports.
const code = (text) => text.replace(/\/\/[^\n]*/g, "").replace(/"(?:[^"\\]|\\.)*"/g, '""');

const edges = new Map(); // file -> Set(files it uses)
const problems = [];
for (const file of files(src)) {
  const text = code(readFileSync(file, "utf8"));
  const used = new Set();
  if (file.endsWith(".rs")) {
    const here = modulePath(file);
    for (const m of text.matchAll(/\bcrate((?:::\w+)+)/g)) used.add(resolve(m[1].split("::").slice(1)));
    for (const m of text.matchAll(/\b((?:super::)+)(\w+(?:::\w+)*)/g)) {
      const ups = m[1].length / "super::".length;
      const self = file.endsWith("mod.rs") ? here : here.slice(0, -1);
      used.add(resolve([...self.slice(0, Math.max(0, self.length - ups + 1)), ...m[2].split("::")]));
    }
    for (const m of text.matchAll(/\bmodule\s*=\s*""/g)) void m; // snippet paths are strings: read below
    for (const m of readFileSync(file, "utf8").matchAll(/module\s*=\s*"\/src\/([^"]+)"/g)) used.add(join(src, m[1]));
  } else {
    for (const m of text.matchAll(/from\s*""|import\s*""/g)) void m;
    for (const m of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*["'](\.{1,2}\/[^"']+)["']/g)) {
      used.add(normalize(join(dirname(file), m[1])));
    }
  }
  used.delete(null);
  used.delete(file);
  edges.set(file, used);
  for (const target of used) {
    const [a, b] = [layerOf(file), layerOf(target)];
    if (rank[a] && rank[b] && rank[b] > rank[a]) {
      problems.push(`${relative(root, file)} (${a}) uses ${relative(root, target)} (${b}): a layer never uses one above it`);
    }
  }
}

// Circles between files of one layer (a module's mod.rs and its files excepted).
const parentOf = (a, b) => a.endsWith("mod.rs") && dirname(a) === dirname(b) && b !== a;
const state = new Map();
const stack = [];
function visit(file) {
  state.set(file, "open");
  stack.push(file);
  for (const next of edges.get(file) ?? []) {
    if (!edges.has(next) || layerOf(next) !== layerOf(file) || parentOf(file, next) || parentOf(next, file)) continue;
    if (state.get(next) === "open") {
      const circle = stack.slice(stack.indexOf(next)).map((f) => relative(root, f));
      problems.push(`a circle of files: ${[...circle, circle[0]].join(" -> ")}`);
    } else if (!state.has(next)) {
      visit(next);
    }
  }
  stack.pop();
  state.set(file, "done");
}
for (const file of edges.keys()) if (!state.has(file)) visit(file);

if (problems.length) {
  for (const p of problems) console.error(`layers: ${p}`);
  process.exit(1);
}
const count = [...edges.values()].reduce((n, s) => n + s.size, 0);
console.log(`layers: ${edges.size} files, ${count} uses: js -> web -> core only, no circle of files`);
