// The code of an edge function on Vercel's edge-runtime, bundled by the test
// (Vite, one script) as a deployment bundles it: the web entry, the module
// given to init() precompiled (edge functions import .wasm as a
// WebAssembly.Module; they cannot compile bytes), the journal in a durable
// adapter the host provides.
import init, { WowClient } from "../../pkg/index.js";
import { clientMode } from "./client-modes.mjs";

globalThis.runEdgeFunction = async ({ wasm, storage, mode, namespace, baseUrl, arg }) => {
  // Inside the edge runtime: no Node.js globals, no browser storage.
  if (globalThis.EdgeRuntime !== "edge-runtime" || typeof process !== "undefined" || typeof indexedDB !== "undefined") {
    throw new Error("not inside Vercel's edge-runtime");
  }
  await init({ module_or_path: wasm });
  const lines = [];
  await clientMode(WowClient, { mode, storage, namespace, baseUrl, arg, print: (value) => lines.push(JSON.stringify(value)) });
  return lines;
};
