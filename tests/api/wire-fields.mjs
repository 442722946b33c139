// The `.d.ts` declares what the module writes: each wire type's members
// (`name?` when optional) against `tests/api/wire-fields.json`, the fields
// the Rust writers write (pinned by the core's `wire_fields` test). Run by
// scripts/check-api.sh; exits 1 naming each difference.
//   node tests/api/wire-fields.mjs
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const ts = createRequire(import.meta.url)(join(here, "../../node_modules/typescript"));

// Declared and never written by the type's own writer, each with where it comes from.
const declaredElsewhere = {
  // sendAndWait's answer when history, not a CommandResult, said it succeeded (js/client.rs success_value).
  "CommandResult.confirmedByHistory?": true,
};

const interfaces = new Map();
for (const file of ["wow_command_client.d.ts", "consumer.d.ts"]) {
  const source = ts.createSourceFile(file, readFileSync(join(here, file), "utf8"), ts.ScriptTarget.Latest, true);
  source.forEachChild((node) => {
    // An interface declared twice is one (TypeScript merges them): CommandResult's extra member.
    if (ts.isInterfaceDeclaration(node) || ts.isClassDeclaration(node))
      interfaces.set(node.name.text, [...(interfaces.get(node.name.text) ?? []), ...node.members]);
  });
}

/** The members of `path` (`Name`, `Name.field`, `Name.field[]`), as `name` or `name?`. */
function declared(path) {
  const [name, ...fields] = path.split(".");
  let members = interfaces.get(name);
  if (!members) return null;
  for (const step of fields) {
    const element = step.endsWith("[]");
    const member = members.find((m) => m.name?.getText() === step.replace("[]", ""));
    let type = member?.type;
    if (element && type && ts.isArrayTypeNode(type)) type = type.elementType;
    if (!type || !ts.isTypeLiteralNode(type)) return null;
    members = type.members;
  }
  return members
    .filter((m) => ts.isPropertySignature(m) || ts.isPropertyDeclaration(m))
    // A member typed `undefined` tells a union's kinds apart; nothing writes it.
    .filter((m) => m.type?.kind !== ts.SyntaxKind.UndefinedKeyword)
    .map((m) => m.name.getText() + (m.questionToken ? "?" : ""))
    .filter((m) => !declaredElsewhere[`${name}.${m}`]);
}

const wire = JSON.parse(readFileSync(join(here, "wire-fields.json"), "utf8"));
const problems = [];
for (const [path, fields] of Object.entries(wire)) {
  const has = declared(path);
  if (!has) {
    problems.push(`${path}: no such declaration (an interface, or an inline object type of one)`);
    continue;
  }
  const missing = fields.filter((f) => !has.includes(f));
  const extra = has.filter((f) => !fields.includes(f));
  if (missing.length) problems.push(`${path}: written and not declared so: ${missing.join(", ")}`);
  if (extra.length) problems.push(`${path}: declared and not written so: ${extra.join(", ")}`);
}
if (problems.length) {
  console.error(`the .d.ts and what the module writes (tests/api/wire-fields.json) differ:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`wire fields: ${Object.keys(wire).length} wire types declared as written`);
