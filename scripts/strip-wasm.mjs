// Drops the debug-only custom sections wasm-bindgen leaves in the shipped
// module: `name` (names of its generated shims; the crate's own names are
// already stripped by the release profile) and `producers`. Nothing reads
// them at run time; stack traces show `wasm-function[N]` instead.
//
//   node scripts/strip-wasm.mjs pkg/wow_command_client_bg.wasm
import { readFileSync, writeFileSync } from "node:fs";
import { withoutCustom } from "./wasm-sections.mjs";

const path = process.argv[2];
const bytes = readFileSync(path);
const stripped = withoutCustom(bytes, ["name", "producers"]);
await WebAssembly.compile(stripped);
writeFileSync(path, stripped);
