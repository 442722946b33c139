// The package as a project gets it: `npm pack` of pkg/, installed into a
// fresh project from the tarball, then used in Node.js, in the browser (the
// project bundled by Vite, run in Chromium) and through the generator's bin.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { launchChromium } from "../support/browser.mjs";
import { root, startGateway } from "../support/gateway.mjs";

const run = (cmd, args, cwd, env = {}) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });

let gateway, browser, project, tarball, files;
before(async () => {
  const packs = mkdtempSync(join(tmpdir(), "wow-pack-"));
  const [packed] = JSON.parse(run("npm", ["pack", join(root, "pkg"), "--json", "--pack-destination", packs], packs));
  tarball = join(packs, packed.filename);
  files = packed.files.map((f) => f.path);
  project = mkdtempSync(join(tmpdir(), "wow-project-"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "a-project", private: true, type: "module" }));
  // From the tarball alone: the package has no dependencies to fetch.
  run("npm", ["install", tarball, "--offline", "--no-audit", "--no-fund", "--loglevel=error"], project);
  gateway = await startGateway({ quiet: true });
});
after(async () => { await browser?.close(); await gateway?.stop(); });

test("the tarball carries the README, the licence, the types, the bin, and nothing of the tests", () => {
  for (const f of ["README.md", "CHANGELOG.md", "LICENSE", "package.json", "index.js", "index.d.ts", "node.js", "workerd.js",
    "wow_command_client_bg.wasm", "consumer-web.js", "consumer-web.d.ts", "adapters.js", "adapters.d.ts",
    "generator/cli.mjs", "generator/generate.mjs", "generator/generate.d.ts"]) {
    assert.ok(files.includes(f), `${f} is in the tarball: ${files.join(", ")}`);
  }
  // (wasm-bindgen names the snippet files after their source paths: snippets/<crate>/src/….js)
  const strays = files.filter((f) => /^(tests?|fixtures|bench|www|src|target|node_modules|scripts)\//.test(f)
    || /\.(rs|test\.mjs|sqlite)$/.test(f) || (f.startsWith("snippets/") && !f.endsWith(".js")));
  assert.deepEqual(strays, []);
  const manifest = JSON.parse(readFileSync(join(project, "node_modules/wow-command-client/package.json"), "utf8"));
  assert.equal(manifest.bin["wow-command-client"], "./generator/cli.mjs");
  assert.equal(manifest.license, "Apache-2.0");
});

test("an installed project uses it in Node.js", () => {
  writeFileSync(join(project, "send.mjs"), `
import { WowClient, CommandError } from "wow-command-client";
const client = await WowClient.connect({ user: null, baseUrl: process.argv[2], storage: "memory" });
const id = "packed-" + Date.now();
const r = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
  create: true, body: { name: "packed", balance: 5 } });
console.log(JSON.stringify({ id, stage: r.stage, requestId: r.requestId, errorClass: typeof CommandError }));
`);
  const out = JSON.parse(run("node", ["send.mjs", gateway.base], project));
  assert.equal(out.stage, "PROCESSED");
  assert.equal(out.errorClass, "function");
});

test("an installed project bundles it for the browser and sends from Chromium", async () => {
  mkdirSync(join(project, "web"), { recursive: true });
  writeFileSync(join(project, "web/index.html"), `<!doctype html><script type="module" src="./main.js"></script>`);
  writeFileSync(join(project, "web/main.js"), `
import init, { WowClient } from "wow-command-client";
await init();
const client = await WowClient.connect({ user: null, baseUrl: location.origin, storage: "indexedDB", namespace: "packed" });
const id = "packed-web-" + Date.now();
try {
  const r = await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account",
    create: true, body: { name: "web", balance: 1 } });
  document.body.dataset.result = JSON.stringify({ id, stage: r.stage, requestId: r.requestId });
} catch (e) { document.body.dataset.result = JSON.stringify({ error: String(e) }); }
`);
  const dist = join(project, "web/dist");
  await build({ root: join(project, "web"), logLevel: "warn", build: { outDir: dist, target: "es2022" } });
  const web = await startGateway({ www: dist, quiet: true });
  try {
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(`${web.base}/`);
    await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 20_000 });
    const result = JSON.parse(await page.evaluate(() => document.body.dataset.result));
    assert.equal(result.error, undefined, result.error);
    assert.equal(result.stage, "PROCESSED");
    assert.equal(await web.stored("account", result.id, result.requestId), 1);
  } finally {
    await web.stop();
  }
});

test("the bin generates typed commands from a running gateway's document, and they type-check", () => {
  const bin = join(project, "node_modules/.bin/wow-command-client");
  assert.ok(existsSync(bin), "npm linked the bin");
  // Without the optional peer, the bin says what to install.
  const missing = (() => { try { run(bin, ["generate", "--input", `${gateway.base}/v3/api-docs`, "--out", "gen"], project); return null; } catch (e) { return e; } })();
  assert.ok(missing, "it fails without openapi-typescript");
  assert.match(missing.stderr, /npm install --save-dev openapi-typescript typescript/);
  // The project installs the peers (here: the copies this repository already has).
  for (const dep of ["openapi-typescript", "typescript"]) {
    symlinkSync(join(root, "node_modules", dep), join(project, "node_modules", dep), "dir");
  }
  const usage = (() => { try { run(bin, [], project); return ""; } catch (e) { return e.stderr; } })();
  assert.match(usage, /usage: wow-command-client generate --input/);
  try {
    run("npx", ["--no-install", "wow-command-client", "generate", "--input", `${gateway.base}/v3/api-docs`, "--out", "gen"], project);
  } catch (e) {
    assert.fail(`${e.stdout}${e.stderr}`);
  }
  // The same generator as a function, through the package's `./generator` export.
  writeFileSync(join(project, "gen.mjs"), `
import { generate } from "wow-command-client/generator";
const r = await generate({ input: process.argv[2], out: "gen-fn" });
console.log(JSON.stringify({ commands: r.commands, aggregates: r.aggregates, warnings: r.warnings }));
`);
  const fromFunction = JSON.parse(run("node", ["gen.mjs", `${gateway.base}/v3/api-docs`], project));
  assert.deepEqual(fromFunction, { commands: 20, aggregates: 3, warnings: [] });
  assert.equal(readFileSync(join(project, "gen-fn/example/cart.ts"), "utf8"), readFileSync(join(project, "gen/example/cart.ts"), "utf8"));
  for (const f of ["gen/schema.ts", "gen/support.ts", "gen/example/cart.ts", "gen/example/order.ts", "gen/transfer/account.ts"]) {
    assert.ok(existsSync(join(project, f)), `${f} generated`);
  }
  writeFileSync(join(project, "use.ts"), `
import { WowClient, type CommandError } from "wow-command-client";
import { example, transfer } from "./gen/index.js";
export async function order(client: WowClient) {
  const cmd = example.order.createOrder({ tenantId: "t", ownerId: "o" }, {
    items: [{ productId: "p", price: 1, quantity: 1 }], fromCart: false,
    address: { country: "China", province: "p", city: "c", district: "d", detail: "x" } }, { intentKey: "order-1" });
  await client.sendAndWait(cmd);
  await client.sendAndWait(transfer.account.lockAmount({ id: "a" }, { amount: 1 }));
}
export function describe(e: CommandError): string {
  const code = e.code as example.ErrorCode;
  switch (code) {
    case "CommandValidation": return "fix the input";
    case "OrderPayDuplicated": return "already paid";
    default: return code;
  }
}
`);
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext",
      lib: ["es2022", "esnext.disposable", "dom"], types: [] },
    files: ["use.ts"],
  }));
  // "OrderPayDuplicated" is only in the union with the hints; without them tsc must refuse the case.
  const refused = (() => { try { run("node", [join(root, "node_modules/typescript/bin/tsc"), "-p", "."], project); return ""; } catch (e) { return e.stdout; } })();
  assert.match(refused, /OrderPayDuplicated/);
  writeFileSync(join(project, "hints.json"), readFileSync(join(root, "www/commands.hints.json")));
  run(bin, ["generate", "--input", `${gateway.base}/v3/api-docs`, "--out", "gen", "--hints", "hints.json"], project);
  try {
    run("node", [join(root, "node_modules/typescript/bin/tsc"), "-p", "."], project);
  } catch (e) {
    assert.fail(`tsc --strict over the installed package and the generated commands:\n${e.stdout}${e.stderr}`);
  }
});
