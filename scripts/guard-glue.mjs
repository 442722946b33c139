// Makes the command client's glue crash-only (src/web/instance.js): every
// export of the module's instance is called through a guard (whatever
// unwinds through the module stops that instance), and the glue hands the
// instance's life its reset (wasm-bindgen's `--experimental-reset-state-function`,
// which builds a fresh instance of the same compiled module), the move of a
// client onto a fresh object's pointer, and its classes. The reset stops
// being an export of the package. Refuses, changing nothing, unless each
// piece of the glue it rewrites is found as expected (a wasm-bindgen whose
// glue differs must be looked at, not patched blindly).
//
//   node scripts/guard-glue.mjs pkg/wow_command_client.js
import { readFileSync, writeFileSync } from "node:fs";

const path = process.argv[2];
let glue = readFileSync(path, "utf8");
const fail = (what) => { console.error(`guard-glue: ${path}: ${what}; nothing changed`); process.exit(1); };

const snippet = glue.match(/from '(\.\/snippets\/[^']+\/src\/web\/)executor\.js'/);
if (!snippet) fail("no import of src/web/executor.js to find the snippets by");
const classes = [...glue.matchAll(/^export class (\w+) \{/gm)].map((m) => m[1]);
if (!classes.length) fail("no exported class");
for (const c of classes) {
  if (!glue.includes(`const ${c}Finalization = `)) fail(`no ${c}Finalization`);
}
const replacements = [
  ["    wasm = instance.exports;\n", "    wasm = __guard(instance.exports);\n"],
  ["    wasm = wasmInstance.exports;\n", "    wasm = __guard(wasmInstance.exports);\n"],
  ["export function __wbg_reset_state () {", "function __wbg_reset_state () {"],
];
for (const [from, to] of replacements) {
  if (glue.split(from).length !== 2) fail(`expected once: ${JSON.stringify(from)}`);
  glue = glue.replace(from, to);
}
if (!/Object\.defineProperty\(obj, '__wbg_inst', \{ value: __wbg_instance_id, writable: true \}\);/.test(glue)) {
  fail("objects do not carry their instance as expected");
}
// The methods that answer at once (not with a promise): the rest wait for a restart.
const atOnce = ["sendAndWaitStream", "subscribe"];
for (const name of atOnce) if (!glue.includes(`    ${name}(`)) fail(`no method ${name}`);
const registries = classes.map((c) => `[${c}, ${c}Finalization]`).join(", ");
glue = glue.replace(/^(\/\* @ts-self-types[^\n]*\n)?/, (head) => `${head ?? ""}import { guard as __guard, instanceHooks as __instanceHooks } from '${snippet[1]}instance.js';\n`);
glue += `
// The instance's life (src/web/instance.js): its reset, and a client's move
// onto the pointer of \`fresh\`, made in the fresh instance.
const __registries = new Map([${registries}]);
__instanceHooks({
  reset: __wbg_reset_state,
  adopt(client, fresh) {
    const registry = __registries.get(client.constructor);
    const ptr = fresh.__destroy_into_raw();
    registry.unregister(client);
    client.__wbg_ptr = ptr;
    client.__wbg_inst = __wbg_instance_id;
    registry.register(client, { ptr, instance: __wbg_instance_id }, client);
  },
  classes: [${classes.join(", ")}],
  atOnce: ${JSON.stringify(atOnce)},
});
`;
writeFileSync(path, glue);
const types = path.replace(/\.js$/, ".d.ts");
const dts = readFileSync(types, "utf8");
const declared = "export function __wbg_reset_state(): void;\n\n";
if (dts.split(declared).length !== 2) fail(`expected once in ${types}: ${declared.trim()}`);
writeFileSync(types, dts.replace(declared, ""));
