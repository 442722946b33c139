// The docs a user and a contributor meet hold together: every relative link
// and anchor in the README, CONTRIBUTING.md and docs/ resolves (a file that
// exists; a heading of it, by GitHub's anchor rule), and every protocol
// section or design rule the code cites is in docs/protocol.md or
// docs/design.md.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { root } from "../support/gateway.mjs";

const pages = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", "tests/gateway/README.md",
  ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
const slug = (heading) => heading.trim().toLowerCase().replace(/`/g, "").replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");

/** The anchors of a Markdown file: one per heading, repeats numbered as GitHub does. */
function anchors(file) {
  const seen = new Map();
  const out = new Set();
  const text = readFileSync(file, "utf8").replace(/^```[\s\S]*?^```$/gm, "");
  for (const [, heading] of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** A page's links outside code: `[text](target)`, targets that are not URLs. */
function links(page) {
  const text = readFileSync(join(root, page), "utf8").replace(/^```[\s\S]*?^```$/gm, "").replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/i.test(t));
}

test("every relative link and anchor of the README, CONTRIBUTING.md and the guides resolves", () => {
  const broken = [];
  let checked = 0;
  for (const page of pages) {
    for (const target of links(page)) {
      checked++;
      const [path, anchor] = target.split("#");
      const file = path ? join(root, dirname(page), path) : join(root, page);
      if (!existsSync(file)) { broken.push(`${page}: ${target} (no such file)`); continue; }
      if (anchor && statSync(file).isFile() && file.endsWith(".md") && !anchors(file).has(anchor)) {
        broken.push(`${page}: ${target} (no heading ${anchor} in ${relative(root, file)})`);
      }
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked > 30, `${checked} links checked`);
});

test("the README is for users: short, installs first, the two commands of the repository at its end", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  assert.ok(readme.split("\n").length <= 250, `${readme.split("\n").length} lines`);
  assert.ok(readme.indexOf("npm install wow-command-client") < readme.indexOf("```js"), "install before the first example");
  const working = readme.indexOf("## Working on this repository");
  assert.ok(working > 0 && readme.indexOf("npm start", working) > 0 && readme.indexOf("npm test", working) > 0);
  for (const guide of ["intents", "scopes", "react", "service-worker", "edge", "consumers", "telemetry", "openapi"]) {
    assert.ok(readme.includes(`(docs/${guide}.md)`), `the README links the ${guide} guide`);
  }
});

/** Every source file of the repository the code's comments are in. */
function sources(dir, out = []) {
  for (const name of readdirSync(join(root, dir))) {
    if (["node_modules", "target", "pkg", "deps", "test-artifacts", ".git", "fixtures"].includes(name)) continue;
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) sources(path, out);
    else if (/\.(rs|js|mjs|ts|md)$/.test(name)) out.push(path);
  }
  return out;
}

test("every protocol section and design rule the code cites is in docs/protocol.md and docs/design.md", () => {
  const sections = new Set([...readFileSync(join(root, "docs/protocol.md"), "utf8").matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]));
  const rules = new Set([...readFileSync(join(root, "docs/design.md"), "utf8").matchAll(/^ ?(\d+)\. \*\*/gm)].map((m) => m[1]));
  const missing = [];
  let cited = 0;
  for (const file of ["src", "crates", "tests", "react", "worker", "adapters", "generator", "scripts", "bench"].flatMap((d) => sources(d))) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(/PROTOCOL(?:\.md)? ?((?:§ ?\d+(?:\.\d+)?(?:[–,] ?(?:§ ?)?\d+(?:\.\d+)?)*))/g)) {
      for (const [, n] of m[1].matchAll(/(\d+(?:\.\d+)?)/g)) {
        cited++;
        if (!sections.has(n)) missing.push(`${file}: PROTOCOL §${n}`);
      }
    }
    for (const [, n] of text.matchAll(/DESIGN rule (\d+)/g)) {
      cited++;
      if (!rules.has(n)) missing.push(`${file}: DESIGN rule ${n}`);
    }
    assert.doesNotMatch(text, /wow-reference\/|DESIGN\.md/, `${file} cites a document outside the repository`);
  }
  assert.deepEqual(missing, []);
  assert.ok(cited > 20, `${cited} citations checked`);
});
