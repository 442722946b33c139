// Doc comments for what wasm-bindgen declares without one in a generated
// .d.ts: a class's `free()` and `[Symbol.dispose]()`, and the loader's
// `InitInput`, `InitOutput` (the module's raw exports: internal) and
// `SyncInitInput`. The API reference (`npm run docs`) requires every export
// to be documented.
//   node scripts/document-dts.mjs pkg/wow_command_client.d.ts …
import { readFileSync, writeFileSync } from "node:fs";

const notes = [
  [/^(\s*)free\(\): void;$/m, "$1/** Frees its memory in the module now, rather than when it is garbage-collected; what the journal holds stays there. */\n$&"],
  [/^(\s*)\[Symbol\.dispose\]\(\): void;$/m, "$1/** `free()`, for `using`. */\n$&"],
  [/^export type InitInput /m, "/** What `init()` loads the module from: its URL, a Response, its bytes, or a compiled WebAssembly.Module. */\n$&"],
  [/^export interface InitOutput /m, "/** @internal The module's raw exports, as `init()` resolves them: not an API of the package. */\n$&"],
  [/^export type SyncInitInput /m, "/** What `initSync()` takes: the module's bytes, or a compiled WebAssembly.Module. */\n$&"],
];
for (const file of process.argv.slice(2)) {
  let text = readFileSync(file, "utf8");
  for (const [pattern, replacement] of notes) {
    text = text.replace(new RegExp(pattern.source, pattern.flags + "g"), replacement);
  }
  writeFileSync(file, text);
}
