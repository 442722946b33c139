// The package's types under the configurations its users have: the packed
// tarball installed into a fresh project, and code using every entry
// type-checked with `strict` under each target (es2020 and later), with and
// without skipLibCheck, with the DOM lib and with the worker lib of edge code,
// under each moduleResolution (bundler, node16, nodenext); the React entry with
// the DOM lib and React's own types. `using client = …`
// type-checks where the user's lib has disposables.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "../support/gateway.mjs";

const ts = createRequire(import.meta.url)(join(root, "node_modules/typescript"));

const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

let project;
before(() => {
  const packs = mkdtempSync(join(tmpdir(), "wow-types-pack-"));
  const [packed] = JSON.parse(run("npm", ["pack", join(root, "pkg"), "--json", "--pack-destination", packs], packs));
  project = mkdtempSync(join(tmpdir(), "wow-types-"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "a-typed-project", private: true, type: "module" }));
  run("npm", ["install", join(packs, packed.filename), "--offline", "--no-audit", "--no-fund", "--loglevel=error"], project);
  // Every entry a browser or an edge function imports, used as an app would.
  writeFileSync(join(project, "use.ts"), `
import init, { WowClient, CommandError, type CommandResult, type Outcome } from "wow-command-client";
import { IdempotentConsumer, EffectError } from "wow-command-client/consumer";
import { memoryAdapter, kvAdapter } from "wow-command-client/adapters";
import { requestBackgroundSync, SYNC_TAG } from "wow-command-client/service-worker";

export async function main(): Promise<CommandResult | Outcome> {
  await init();
  const client = await WowClient.connect({ user: null, baseUrl: "https://gateway.example", storage: memoryAdapter(),
    persistStorage: true, headers: async () => ({ Authorization: "Bearer x" }) });
  const kept: boolean | null = await client.persistence;
  void kept;
  void kvAdapter; void IdempotentConsumer; void requestBackgroundSync; void SYNC_TAG;
  try {
    return await client.sendAndWait({ aggregate: { resource: "account", id: "a" }, action: "lock_amount", body: { amount: 1 } });
  } catch (e) {
    if (e instanceof CommandError) return e.detail as Outcome;
    if (e instanceof EffectError) throw e;
    throw e;
  } finally {
    client.free();
  }
}
`);
  // The React entry, with React's own types as a React app has them.
  mkdirSync(join(project, "node_modules/@types"), { recursive: true });
  symlinkSync(join(root, "node_modules/@types/react"), join(project, "node_modules/@types/react"), "dir");
  symlinkSync(join(root, "node_modules/csstype"), join(project, "node_modules/csstype"), "dir");
  writeFileSync(join(project, "react.ts"), `
import { createElement, type ReactNode } from "react";
import { WowProvider, useCommand, useIntent, useIntents, useWowClient, type CommandState } from "wow-command-client/react";
import type { IntentRecord, Outcome } from "wow-command-client";

function Sender(): ReactNode {
  const { send, state, error, outcome, reset } = useCommand();
  const s: CommandState = state;
  const last: Outcome | null = outcome;
  const record: IntentRecord | null | undefined = useIntent(last?.intentId);
  const open: readonly IntentRecord[] = useIntents({ states: ["pending", "sending", "unknown"] });
  const { client } = useWowClient();
  const click = async (): Promise<void> => {
    const o: Outcome = await send({ aggregate: { resource: "cart", id: "o-1" }, action: "add", body: {} }, { onIntent: (id: string) => void id });
    if (o.status === "rejected") reset();
  };
  void click; void client; void error;
  return createElement("p", null, \`\${s} \${record?.state ?? "-"} \${open.length}\`);
}

export const app = createElement(WowProvider, { options: { baseUrl: "https://gateway.example" } }, createElement(Sender));
`);
  writeFileSync(join(project, "using.ts"), `
import { WowClient } from "wow-command-client";
export async function scoped(): Promise<string> {
  using client = await WowClient.connect({ user: null, baseUrl: "https://gateway.example", storage: "memory" });
  return client.namespace;
}
`);
});

/** The errors of type-checking `files` with these compiler options, as text. */
function check(files, options) {
  const parsed = ts.convertCompilerOptionsFromJson({ strict: true, noEmit: true, types: [], ...options }, project);
  assert.deepEqual(parsed.errors, [], "the config itself is valid");
  const program = ts.createProgram(files.map((f) => join(project, f)), parsed.options);
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (f) => f, getCurrentDirectory: () => project, getNewLine: () => "\n" });
}

const resolutions = { bundler: "esnext", node16: "node16", nodenext: "nodenext" };
const targets = ["es2020", "es2022", "esnext"];
const libs = { dom: ["dom", "dom.iterable"], worker: ["webworker"] };

test("the types compile under strict configs: every target, lib, resolution, with and without skipLibCheck", () => {
  const failures = [];
  let configs = 0;
  for (const target of targets) {
    for (const [libName, lib] of Object.entries(libs)) {
      for (const [moduleResolution, module] of Object.entries(resolutions)) {
        for (const skipLibCheck of [false, true]) {
          const options = { target, module, moduleResolution, lib: [target, ...lib], skipLibCheck };
          // The React entry where React apps are: with the DOM lib.
          const errors = check(libName === "dom" ? ["use.ts", "react.ts"] : ["use.ts"], options);
          configs += 1;
          if (errors) failures.push(`${JSON.stringify(options)}\n${errors}`);
        }
      }
    }
  }
  assert.equal(configs, 36);
  assert.deepEqual(failures, [], `${failures.length} of ${configs} configs fail:\n${failures.join("\n")}`);
});

test("`using client = …` type-checks where the lib has disposables, and is refused where it has not", () => {
  for (const [moduleResolution, module] of Object.entries(resolutions)) {
    for (const lib of [["esnext", "dom"], ["es2022", "esnext.disposable", "webworker"]]) {
      const options = { target: "es2022", module, moduleResolution, lib, skipLibCheck: false };
      assert.equal(check(["using.ts"], options), "", JSON.stringify(options));
    }
  }
  // Without the lib, the user's own `using` is what fails, not the package's types.
  const errors = check(["using.ts"], { target: "es2022", module: "nodenext", moduleResolution: "nodenext", lib: ["es2022", "dom"] });
  assert.match(errors, /Disposable/);
  assert.doesNotMatch(errors, /node_modules/);
});
