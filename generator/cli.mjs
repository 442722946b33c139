#!/usr/bin/env node
// `npx wow-command-client generate --input <openapi.json | URL> --out <dir> [--hints hints.json] [--import-from module]`
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { generate } from "./generate.mjs";

const usage = `usage: wow-command-client generate --input <openapi.json | URL> --out <dir> [--hints <hints.json>] [--import-from <module>]

  --input        a Wow service's OpenAPI document (a file, or its URL: http://host/v3/api-docs)
  --out          where the TypeScript goes (schema.ts, support.ts, <context>/<aggregate>.ts, index.ts)
  --hints        what the document cannot say: {"operations": {"<operationId>": {"void": true}},
                 "errorCodes": {"<contextAlias>": ["OrderPayDuplicated"]}}
  --import-from  the module the output imports the SDK's types from (default: wow-command-client)`;

const [command, ...rest] = process.argv.slice(2);
if (command !== "generate") {
  console.error(command ? `unknown command \`${command}\`\n\n${usage}` : usage);
  process.exit(command === "--help" || command === "-h" ? 0 : 2);
}
let values;
try {
  ({ values } = parseArgs({ args: rest, options: {
    input: { type: "string" }, out: { type: "string" }, hints: { type: "string" },
    "import-from": { type: "string" }, help: { type: "boolean", short: "h" },
  } }));
} catch (e) {
  console.error(`${e.message}\n\n${usage}`);
  process.exit(2);
}
if (values.help) { console.log(usage); process.exit(0); }
if (!values.input || !values.out) { console.error(`--input and --out are required\n\n${usage}`); process.exit(2); }
try {
  const hints = values.hints ? JSON.parse(await readFile(values.hints, "utf8")) : {};
  const { warnings } = await generate({
    input: values.input, out: values.out, hints,
    importFrom: values["import-from"], log: (line) => console.error(line),
  });
  process.exit(warnings.length && process.env.WOW_GENERATE_STRICT ? 1 : 0);
} catch (e) {
  console.error(`wow-command-client generate: ${e.message}`);
  process.exit(1);
}
