// The layers hold (src/ and the core's crate, crates/core): data flows js -> web -> core, never up. A file of
// `web` may not use `crate::js`, a file of `core` neither `crate::web` nor
// `crate::js`, and no JS helper of `web` may import one of `js`. Inside a
// layer, no two files hold each other, directly or round a longer circle: a
// module's mod.rs counts as any file (its `mod` lines aside), so a child
// using its parent's items and the parent naming the child's is a circle; a
// name a mod.rs only re-exports is the child file's for the files outside
// the module, while the module's own files name each other directly (one
// that goes through the re-export uses the mod.rs).
//
//   node scripts/check-layers.mjs        (npm test runs it)
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { join, dirname, relative, normalize } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const src = join(root, "src");
// The core is a crate of its own (crates/core), used above as `crate::core`.
const coreSrc = join(root, "crates/core/src");
const rank = { core: 1, web: 2, js: 3 };

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.(rs|js)$/.test(name) ? [path] : [];
  });
}

/** A module's own file (mod.rs, or a crate's lib.rs): its module path is its folder's. */
const isModFile = (file) => /\/(mod|lib)\.rs$/.test(file);
const inCore = (file) => file.startsWith(coreSrc + "/");
const layerOf = (file) => (inCore(file) ? "core" : relative(src, file).split("/")[0]);

/** Where module path `segments` would be: `core::…` in the core's crate, the rest in src/. */
const baseOf = (segments) => (segments[0] === "core" ? join(coreSrc, ...segments.slice(1)) : join(src, ...segments));

/** The file a module path (`crate::web::executor::Executor`) is in, by its longest existing prefix;
 * a name a mod.rs re-exports from one of its files (`pub use io::Do;`) is in that file. */
function resolve(segments, by) {
  for (let n = segments.length; n > 0; n--) {
    const base = baseOf(segments.slice(0, n));
    for (const candidate of [`${base}.rs`, join(base, n === 1 && segments[0] === "core" ? "lib.rs" : "mod.rs")]) {
      if (!existsSync(candidate)) continue;
      // A module's own files name each other directly: one that goes
      // through its mod.rs's re-export uses the mod.rs.
      const own = by && dirname(by) === dirname(candidate);
      const from = isModFile(candidate) && !own && n < segments.length && reexports(candidate).get(segments[n]);
      return from ? resolve([...segments.slice(0, n), from, segments[n]]) : candidate;
    }
  }
  return null;
}

/** What a mod.rs re-exports from its own files: name -> the file's module name. */
const reexported = new Map();
function reexports(file) {
  if (!reexported.has(file)) {
    const names = new Map();
    for (const m of code(readFileSync(file, "utf8")).matchAll(/\bpub(?:\([^)]*\))?\s+use\s+(\w+)::(?:\{([^}]*)\}|(\w+))\s*;/g)) {
      if (["crate", "super", "self"].includes(m[1])) continue;
      for (const name of (m[2] ?? m[3]).split(",").map((n) => n.trim().split(/\s+as\s+/).pop()).filter(Boolean)) names.set(name, m[1]);
    }
    reexported.set(file, names);
  }
  return reexported.get(file);
}

/** The module path of a Rust file: src/web/executor.rs -> [web, executor]; a mod.rs is its folder. */
function modulePath(file) {
  const parts = inCore(file)
    ? ["core", ...relative(coreSrc, file).replace(/\.rs$/, "").split("/")]
    : relative(src, file).replace(/\.rs$/, "").split("/");
  if (parts.at(-1) === "mod" || parts.at(-1) === "lib") parts.pop();
  return parts;
}

// Comments and strings say nothing about imports.
const code = (text) => text.replace(/\/\/[^\n]*/g, "").replace(/"(?:[^"\\]|\\.)*"/g, '""');

const edges = new Map(); // file -> Set(files it uses)
const problems = [];
for (const file of [...files(src), ...files(coreSrc)]) {
  const text = code(readFileSync(file, "utf8"));
  const used = new Set();
  if (file.endsWith(".rs")) {
    const here = modulePath(file);
    for (const m of text.matchAll(/\bcrate((?:::\w+)+)/g)) {
      used.add(resolve([...(inCore(file) ? ["core"] : []), ...m[1].split("::").slice(1)], file));
    }
    for (const m of text.matchAll(/\b((?:super::)+)(\w+(?:::\w+)*)/g)) {
      const ups = m[1].length / "super::".length;
      const self = isModFile(file) ? here : here.slice(0, -1);
      used.add(resolve([...self.slice(0, Math.max(0, self.length - ups + 1)), ...m[2].split("::")], file));
    }
    // A mod.rs naming its own files (`pub use io::Do`, `calls::aborted(…)`).
    if (isModFile(file)) {
      const children = [...text.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm)].map((m) => m[1]);
      for (const child of children) {
        for (const m of text.matchAll(new RegExp(`(?<![:\\w])${child}((?:::\\w+)+)`, "g"))) {
          used.add(resolve([...here, child, ...m[1].split("::").slice(1)]));
        }
      }
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

// Circles between files of one layer.
const state = new Map();
const stack = [];
function visit(file) {
  state.set(file, "open");
  stack.push(file);
  for (const next of edges.get(file) ?? []) {
    if (!edges.has(next) || layerOf(next) !== layerOf(file)) continue;
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
