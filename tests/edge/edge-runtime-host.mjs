// Runs the bundled edge function (edge-runtime-guest.mjs) inside Vercel's
// edge-runtime, in this process, over a file-backed journal the test can
// leave behind by killing the process:
//   node edge-runtime-host.mjs <bundle> <send|resume|intents|probe> <dir> <ns> <gateway> [json]
// Prints one JSON line per result.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EdgeRuntime } from "edge-runtime";
import { fileAdapter } from "../../pkg/node-adapters.js";
import { root } from "../support/gateway.mjs";

const [bundle, mode, dir, namespace, baseUrl, arg] = process.argv.slice(2);
const runtime = new EdgeRuntime({ initialCode: readFileSync(bundle, "utf8") });
const wasm = await WebAssembly.compile(readFileSync(join(root, "pkg/wow_command_client_bg.wasm")));
const lines = await runtime.context.runEdgeFunction({ wasm, storage: fileAdapter(dir), mode, namespace, baseUrl, arg });
for (const line of lines) process.stdout.write(`${line}\n`);
process.exit(0);
