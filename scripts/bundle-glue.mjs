// Bundles a module's glue with the snippets it imports (and those they
// import) into the glue's own file, which then exports `names` of the
// snippet `from` too (its error class), so an entry re-exports them from the
// glue and every class is the one the glue throws. One file instead of a
// dozen: a browser fetches one module, and gzip shares one dictionary across
// what were separate files (the WowClient-only download about 2.5 KB smaller,
// docs/benchmarks.md). The snippet files stay in the package, unused by it.
//
//   node scripts/bundle-glue.mjs pkg/wow_command_client.js CommandError snippets/<crate>/src/js/support.js
import { readFileSync, writeFileSync } from "node:fs";
import { rollup } from "rollup";

const [glue, names, from] = process.argv.slice(2);
writeFileSync(glue, `${readFileSync(glue, "utf8")}\nexport { ${names} } from './${from}';\n`);
const bundle = await rollup({
  input: glue,
  // Nothing may be dropped or reordered by assumption: the snippets are
  // imported as namespaces handed to the module as its imports.
  treeshake: { moduleSideEffects: true },
  onwarn: (warning) => { throw new Error(`bundle-glue: ${glue}: ${warning.message}`); },
});
const { output } = await bundle.generate({ format: "es" });
await bundle.close();
if (output.length !== 1) throw new Error(`bundle-glue: ${glue}: expected one file, got ${output.length}`);
writeFileSync(glue, output[0].code);
