// A new user's first hour, as the README and the guides tell it, in a fresh Vite app:
// create-vite's own react-ts template (its tsconfig: strict, noUnusedLocals,
// noUnusedParameters, verbatimModuleSyntax, erasableSyntaxOnly; TypeScript 7's
// `tsc -b`), the packed package installed beside what the template installs,
// command builders generated from the gateway's OpenAPI document, every
// JS/TS code block of the README and of the guides in docs/ in `src/` (the
// Vite config and the Service Worker blocks as the app's own). `tsc -b` and
// `vite build` pass, and the bundle runs in Chromium against the gateway: the
// README's first command (its outcome rendered), the React guide's app, the
// Service Worker guide's worker finishing a closed tab's intent, and every
// other block, the edge guide's Worker answering a request among them.
//
// The harness adds only what the README leaves to the app (the names in
// `readme-globals.d.ts`, the gateway's origin for "https://gateway.example…")
// and a `main.tsx` that runs the blocks.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "../support/browser.mjs";
import { closeTabMidFlight } from "../support/e2e.mjs";
import { createAccount, root, startGateway } from "../support/gateway.mjs";
import { generate } from "../../pkg/generator/generate.mjs";

const deps = join(root, "tests/vite-app/deps/node_modules");
const run = (cmd, args, cwd) => {
  try {
    return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(" ")} failed:\n${e.stdout}${e.stderr}`);
  }
};

/** The guides a user reads: the README, then every page of docs/ it links to. */
const GUIDES = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];

/** The JS and TS code blocks of the README and the guides, in order, each with its file and the heading it sits under. */
function readmeBlocks() {
  const blocks = [];
  for (const doc of GUIDES) {
    const text = readFileSync(join(root, doc), "utf8");
    let heading = "";
    const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
    let at = 0;
    for (const m of text.matchAll(fence)) {
      for (const h of text.slice(at, m.index).matchAll(/^#+ (.*)$/gm)) heading = h[1];
      at = m.index + m[0].length;
      if (["js", "jsx", "ts", "tsx"].includes(m[1])) blocks.push({ lang: m[1], code: m[2], heading, doc });
    }
  }
  return blocks;
}

/** What the README's examples leave to the app: declared for `tsc`, defined at run time by `app-globals.ts`. */
const GLOBALS = `import type { Command, StorageAdapter, WowClient } from "wow-command-client";
import type { example } from "./commands/index.ts";

declare global {
  const process: { env: Record<string, string | undefined> };
  const myStoreAdapter: StorageAdapter;
  const shipped: { id: string; email: string };
  const mailApi: {
    send(mail: { to: string; template: string; idempotencyKey: string }): Promise<unknown>;
    find(idempotencyKey: string): Promise<boolean>;
  };
  const signOutButton: HTMLButtonElement;
  function token(): Promise<string>;
  function signedInUser(): Promise<string>;
  function workerToken(): Promise<string>;
  function readModel(aggregateId: string): Promise<{ version: number }>;
  function showProgressFor(intentId: string): void;
  function showHint(text: string): void;
  const client: WowClient;
  const command: Command;
  const baseUrl: string;
  const badge: HTMLElement;
  const cancelButton: HTMLButtonElement;
  const keepButton: HTMLButtonElement;
  const metrics: { record(kind: string, fields: Record<string, unknown>): void };
  const user: { id: string };
  const cartId: string;
  const address: Parameters<typeof example.order.createOrder>[1]["address"];
}
`;

/** What an edge function's platform declares (its bundler's types): a script, so the module is ambient. */
const PLATFORM = `declare module "wow-command-client/wasm?module" {
  const module: WebAssembly.Module;
  export default module;
}
`;

const APP_GLOBALS = `Object.assign(globalThis, {
  token: async () => "a-token",
  signedInUser: async () => "vite-sw",
  workerToken: async () => "a-worker-token",
  // The README's first example signs in as "user-42"; the guides go on as the same person.
  user: { id: "user-42" },
});
`;

let app, dist, gateway, docGateway, browser, blocks, files, runnable;
before(async () => {
  assert.ok(existsSync(join(deps, "create-vite")), "the Vite app's dependencies are installed (scripts/bootstrap.sh)");
  app = mkdtempSync(join(tmpdir(), "wow-vite-app-"));
  cpSync(join(deps, "create-vite/template-react-ts"), app, { recursive: true });
  renameSync(join(app, "_gitignore"), join(app, ".gitignore"));
  // What `npm install` gives the template, pinned (tests/vite-app/deps), and the packed package.
  mkdirSync(join(app, "node_modules"));
  for (const name of readdirSync(deps)) symlinkSync(join(deps, name), join(app, "node_modules", name), "dir");
  const packs = mkdtempSync(join(tmpdir(), "wow-vite-app-pack-"));
  const [packed] = JSON.parse(run("npm", ["pack", join(root, "pkg"), "--json", "--pack-destination", packs], packs));
  mkdirSync(join(app, "node_modules/wow-command-client"));
  run("tar", ["xzf", join(packs, packed.filename), "-C", join(app, "node_modules/wow-command-client"), "--strip-components=1"], app);

  docGateway = await startGateway({ quiet: true });
  // The builders, as the README's `npx … -p typescript@5` gives them (this repository's TypeScript 5 and openapi-typescript).
  await generate({ input: `${docGateway.base}/v3/api-docs`, out: join(app, "src/commands"),
    hints: { errorCodes: { example: ["OrderPayDuplicated"] } } });

  blocks = readmeBlocks();
  files = [];
  const origin = (code) => code.replace(/"https:\/\/gateway\.example(\.com)?"/g, "location.origin");
  blocks.forEach((b, i) => {
    const code = origin(b.code);
    if (code.startsWith("// vite.config.ts\n")) return writeFileSync(join(app, "vite.config.ts"), code);
    // The worker: what the README leaves to the app is defined before its import runs.
    if (code.startsWith("// src/sw.ts")) return writeFileSync(join(app, "src/sw.ts"), `import "./app-globals.ts";\n${code}`);
    const file = `readme-${String(i).padStart(2, "0")}.${b.lang.startsWith("js") ? b.lang.replace("js", "ts") : b.lang}`;
    b.file = file;
    files.push(file);
    writeFileSync(join(app, "src", file), code);
  });
  writeFileSync(join(app, "src/readme-globals.d.ts"), GLOBALS);
  writeFileSync(join(app, "src/app-globals.ts"), APP_GLOBALS);
  writeFileSync(join(app, "src/edge-platform.d.ts"), PLATFORM);
  // The README's first command, the React guide's app, the Service Worker guide's page.
  const first = blocks.find((b) => b.doc === "README.md");
  const react = blocks.find((b) => b.code.includes("export const App"));
  const page = blocks.find((b) => b.code.includes("requestBackgroundSync()") && b.code.includes("register("));
  assert.ok(first?.file && react?.file && page?.file, "the README's first, the React and the Service Worker page examples");
  // Every other block runs in the page, one after another (a test below), but
  // a declaration and the edge handler that imports its platform's
  // `wasm?module` (its bundler's, not Vite's; tests/edge runs that setup).
  runnable = blocks.filter((b) => b.file && ![first, react, page].includes(b) && !/^export interface /.test(b.code)
    && !b.code.includes("wasm?module"));
  // main.tsx runs the README's first example, renders its React app, and
  // registers its worker; the test drives the page through `window.wow`.
  writeFileSync(join(app, "src/main.tsx"), `import "./app-globals.ts";
import { createRoot } from "react-dom/client";
import { WowClient } from "wow-command-client";
import { App } from "./${react.file}";

type Block = () => Promise<Record<string, unknown>>;
declare global { interface Window { wow: { WowClient: typeof WowClient; first: string; logs: string[]; blocks: Record<string, Block> } } }
window.wow = { WowClient, first: "running", logs: [], blocks: {
${runnable.map((b) => `  "${b.file}": () => import("./${b.file}"),`).join("\n")}
} };
const log = console.log;
console.log = (...args: unknown[]) => { window.wow.logs.push(args.map(String).join(" ")); log(...args); };
createRoot(document.getElementById("root")!).render(<App />);
import("./${first.file}").then(() => { window.wow.first = "done"; }, (e: unknown) => { window.wow.first = \`threw \${e}\`; });
import("./${page.file}").catch((e: unknown) => console.error("the worker's page block threw", e));
`);
  await docGateway.stop();
  docGateway = null;
  dist = join(app, "dist");
});
after(async () => { await browser?.close(); await gateway?.stop(); await docGateway?.stop(); });

test("the packed package installs into the template without a peer conflict (it has TypeScript 7)", () => {
  const manifest = JSON.parse(readFileSync(join(app, "node_modules/wow-command-client/package.json"), "utf8"));
  const template = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
  assert.match(template.devDependencies.typescript, /^~?7\./, "the template installs TypeScript 7");
  // npm refuses the install (ERESOLVE) when a peer's range excludes the app's version.
  assert.equal(manifest.peerDependencies.typescript, undefined, "no peer range on TypeScript, which the package never imports");
  assert.equal(manifest.peerDependencies.react, ">=18");
});

test("the package's generator says what to do under TypeScript 7 (openapi-typescript needs TypeScript 5's API)", () => {
  let error = "";
  try {
    run("node", [join(app, "node_modules/wow-command-client/generator/cli.mjs"), "generate", "--input",
      join(root, "tests/fixtures/wow-8.10.10/example-domain-openapi.json"), "--out", join(app, "ignored")], app);
  } catch (e) {
    error = e.message;
  }
  assert.match(error, /openapi-typescript needs TypeScript's compiler API, which TypeScript 7\.0\.\d+ \(found here\) does not have\. /);
  assert.match(error, /npx -p wow-command-client -p openapi-typescript -p typescript@5 wow-command-client generate/);
});

test("`tsc -b` (the template's build) passes: the generated builders and every README block under its strict flags", () => {
  const tsc = JSON.parse(readFileSync(join(app, "node_modules/typescript/package.json"), "utf8")).version;
  assert.match(tsc, /^7\./);
  assert.ok(files.length >= 10, `README blocks compiled: ${files.join(", ")}`);
  const config = JSON.parse(readFileSync(join(app, "tsconfig.app.json"), "utf8").replace(/\/\*.*?\*\//g, ""));
  // `strict` is TypeScript 6 and 7's default; the template leaves it so.
  assert.notEqual(config.compilerOptions.strict, false);
  for (const flag of ["noUnusedLocals", "noUnusedParameters", "verbatimModuleSyntax", "erasableSyntaxOnly"]) {
    assert.equal(config.compilerOptions[flag], true, flag);
  }
  try {
    run(join(app, "node_modules/.bin/tsc"), ["-b"], app);
  } catch (e) {
    // Name the README block each error is in.
    const named = e.message.replace(/src\/(readme-\d+)\.tsx?/g, (f, n) => `${f} (${blocks[Number(n.slice(7))].doc}: "${blocks[Number(n.slice(7))].heading}")`);
    assert.fail(named);
  }
});

test("`vite build` with the README's config writes the app, its worker as sw.js, and the .wasm as an asset", async () => {
  run(join(app, "node_modules/.bin/vite"), ["build", "--logLevel", "warn"], app);
  assert.ok(existsSync(join(dist, "index.html")));
  assert.ok(existsSync(join(dist, "sw.js")), "the worker keeps its name");
  assert.ok(readdirSync(join(dist, "assets")).some((f) => f.endsWith(".wasm")));
  gateway = await startGateway({ www: dist, quiet: true });
  browser = await launchChromium();
});

/** Waits for `page` to say `what` within `ms`; a timeout says what the page showed and logged. */
async function until(page, what, ms = 30_000) {
  try {
    await page.waitForFunction(what, null, { timeout: ms });
  } catch (e) {
    const seen = await page.evaluate(() => ({ text: document.body.innerText, wow: window.wow })).catch((why) => `unreadable: ${why}`);
    throw new Error(`${e.message}\nthe page: ${JSON.stringify(seen)}`);
  }
}

const streams = async (resource, aggregateId) => {
  const r = await fetch(`${gateway.base}/${resource}/event/count`, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ operator: "AGGREGATE_ID", value: aggregateId }) });
  return r.json();
};

test("in Chromium: the README's first command runs and renders its outcome, and the React guide's app sends", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const rendered = () => page.evaluate(() => /lock: \w+ at version \w+/.exec(document.body.textContent)?.[0] ?? null);
  try {
    await page.goto(`${gateway.base}/`);
    await until(page, () => window.wow && window.wow.first !== "running");
    const { first, logs } = await page.evaluate(() => window.wow);
    assert.equal(first, "done", logs.join("\n"));
    const shown = await rendered();
    assert.match(shown ?? "", /^lock: succeeded at version \d+$/, await page.evaluate(() => document.body.textContent));
    assert.equal(await streams("account", "alice"), 2, "the create and the lock");
    // Run again (a reload): the keyed create and the keyed lock are the same
    // intents, replayed without sending, at the first run's version.
    await page.reload();
    await until(page, () => window.wow && window.wow.first !== "running");
    const again = await page.evaluate(() => window.wow);
    assert.equal(again.first, "done", again.logs.join("\n"));
    assert.equal(await rendered(), shown, "the same outcome, replayed");
    assert.equal(await streams("account", "alice"), 2, "nothing sent twice");

    // The React example: the button sends addCartItem and follows the journal.
    const before = await streams("cart", "me");
    await page.getByRole("button", { name: /Add/ }).click();
    await until(page, () => !document.querySelector("button").disabled && document.body.textContent.includes("Add"));
    for (let i = 0; (await streams("cart", "me")) === before; i++) {
      assert.ok(i < 200, "the cart command reached the history");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(await streams("cart", "me"), before + 1);
    assert.doesNotMatch(await page.textContent("button"), /not confirmed|[A-Z][a-z]+[A-Z]/, "no error code shown");
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test("in Chromium: the README's worker, built by Vite, finishes the intent a closed tab left", async () => {
  const context = await browser.newContext();
  const id = await createAccount(gateway.base, "vite-sw");
  const page = await context.newPage();
  await page.goto(`${gateway.base}/`);
  assert.ok(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => !!r.active)), "the README's page block registered the worker");
  const sent = await closeTabMidFlight(gateway, page, id,
    "window.wow.WowClient.connect({ user: 'vite-sw', baseUrl: location.origin, namespace: 'shop' })");
  // The next page of the app calls requestBackgroundSync() (the README's page block): the worker drives.
  const later = await context.newPage();
  await later.goto(`${gateway.base}/`);
  const seen = await later.evaluate(async (intentId) => {
    const c = await window.wow.WowClient.connect({ user: "vite-sw", baseUrl: location.origin, namespace: "shop" });
    for (let i = 0; i < 600; i++) {
      const rec = await c.intent(intentId);
      if (rec?.state === "succeeded") return { state: rec.state, attempts: rec.attempts.length };
      await new Promise((r) => setTimeout(r, 50));
    }
    return (await c.intent(intentId))?.state;
  }, sent.intentId);
  assert.deepEqual(seen, { state: "succeeded", attempts: 1 }, "the worker finished it");
  assert.equal(await gateway.stored("account", id, sent.requestId), 1, "confirmed from history, not sent again");
  await context.close();
});

test("in Chromium: every other block of the README and the guides runs against the gateway", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  try {
    await page.goto(`${gateway.base}/`);
    await until(page, () => window.wow && window.wow.first !== "running");
    // What the guides leave to the app, made real: a connected client and an
    // account its `command` locks, buttons, a read model that reads history,
    // a mail API that remembers what it sent.
    await page.evaluate(async () => {
      const client = await window.wow.WowClient.connect({ user: null, baseUrl: location.origin, namespace: "guides" });
      const id = `guide-${crypto.randomUUID()}`;
      await client.sendAndWait({ aggregate: { resource: "account", id }, action: "create_account", create: true,
        body: { name: id, balance: 100 } });
      const element = (tag, text) => Object.assign(document.body.appendChild(document.createElement(tag)), { textContent: text });
      const mails = new Map(), hints = [];
      Object.assign(globalThis, {
        client, command: { aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } },
        baseUrl: location.origin, process: { env: { GATEWAY: location.origin } },
        badge: element("output", ""), cancelButton: element("button", "cancel"), keepButton: element("button", "keep"),
        signOutButton: element("button", "sign out"),
        metrics: { recorded: [], record(kind, fields) { this.recorded.push({ kind, ...fields }); } },
        user: { id: "user-42" }, cartId: `cart-${crypto.randomUUID()}`,
        address: { country: "China", province: "Shanghai", city: "Shanghai", district: "Pudong", detail: "1 Century Ave" },
        shipped: { id: `shipment-${crypto.randomUUID()}`, email: "ada@example.com" },
        mailApi: { mails, send: async (mail) => { mails.set(mail.idempotencyKey, mail); return { id: mail.idempotencyKey }; },
          find: async (key) => mails.has(key) },
        // The version a projection has reached: the aggregate's streams in history.
        readModel: async (aggregateId) => ({ version: await (await fetch(`${location.origin}/account/event/count`, {
          method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ operator: "AGGREGATE_ID", value: aggregateId }) })).json() }),
        hints, showHint: (text) => hints.push(text), showProgressFor: (intentId) => hints.push(`progress of ${intentId}`),
      });
    });
    const ran = [];
    for (const b of runnable) {
      const r = await page.evaluate(async (file) => {
        try {
          const m = await Promise.race([window.wow.blocks[file](),
            new Promise((_, no) => setTimeout(() => no(new Error("it did not finish within 30 s")), 30_000))]);
          return { exports: Object.keys(m) };
        } catch (e) {
          return { error: `${e?.name}: ${e?.message}${e?.code ? ` (code ${e.code})` : ""}` };
        }
      }, b.file);
      assert.equal(r.error, undefined, `${b.doc}, under "${b.heading}" (${b.file}), threw: ${r.error}`);
      ran.push(`${b.doc}: ${b.heading}`);
    }
    assert.ok(ran.length >= 12, `blocks run: ${ran.join("; ")}`);
    const edge = runnable.find((b) => b.doc === "docs/edge.md" && b.code.includes("kvAdapter(env.JOURNAL)"));
    assert.ok(edge, "the edge guide's Worker is among the blocks run");
    // The edge guide's Worker answers a request, its journal in a KV namespace.
    const answer = await page.evaluate(async (file) => {
      const kv = new Map();
      const JOURNAL = {
        get: async (k) => kv.get(k) ?? null, put: async (k, v) => { kv.set(k, v); }, delete: async (k) => { kv.delete(k); },
        list: async ({ prefix = "" }) => ({ keys: [...kv.keys()].filter((k) => k.startsWith(prefix)).map((name) => ({ name })), list_complete: true }),
      };
      const worker = (await window.wow.blocks[file]()).default;
      const response = await worker.fetch(new Request("https://edge.example/", { method: "POST", body: JSON.stringify(globalThis.command) }),
        { GATEWAY: location.origin, JOURNAL });
      return { status: response.status, outcome: await response.json(), journal: kv.size };
    }, edge.file);
    assert.equal(answer.status, 200);
    assert.equal(answer.outcome.status, "succeeded", JSON.stringify(answer.outcome));
    assert.ok(answer.journal >= 1, "the intent was written to the KV journal");
    // The telemetry guide's subscription shows the next intent's state on its badge;
    // the consumers guide sent its mail once, with the identity as its key.
    const after = await page.evaluate(async () => {
      await globalThis.client.send(globalThis.command);
      for (let i = 0; i < 100 && !/: succeeded$/.test(globalThis.badge.textContent); i++) await new Promise((r) => setTimeout(r, 20));
      return { badge: globalThis.badge.textContent, mails: [...globalThis.mailApi.mails.keys()], shipment: globalThis.shipped.id };
    });
    assert.match(after.badge, /^[\w-]+: succeeded$/);
    assert.deepEqual(after.mails, [after.shipment]);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
