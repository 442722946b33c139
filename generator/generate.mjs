// Typed command builders from a Wow service's OpenAPI document.
//
// openapi-typescript turns the document's schemas into TypeScript (with its
// `$ref` resolution); what is ours is the Wow mapping: which operations are
// commands, which aggregate each belongs to, what its route needs (tenant,
// owner, id, path and header variables), and whether it creates its
// aggregate. The output is deterministic (sorted, no timestamps), so a
// regenerated file diffs cleanly.

import { readFile, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";

const COMMAND_OK = "#/components/responses/wow.CommandOk";
const WAIT_STAGE = "#/components/parameters/wow.Command-Wait-Stage";
const COMMAND_METHODS = ["post", "put", "patch", "delete"];
const FACADE = "/wow/command/send";

/**
 * Generates TypeScript for every command operation of a Wow OpenAPI document.
 * @param {object} options
 * @param {string | object} options.input  a file path, an http(s) URL, or the document itself
 * @param {string} options.out             the output directory
 * @param {object} [options.hints]         what the document cannot say: `{ operations: { [operationId]: { void?, create?, allowCreate? } }, errorCodes: { [contextAlias]: string[] } }`
 * @param {string} [options.importFrom]    the module the output imports the SDK's types from
 * @param {(line: string) => void} [options.log]  progress and warnings
 * @returns {Promise<{ files: string[], commands: number, aggregates: number, warnings: string[] }>}
 */
export async function generate({ input, out, hints = {}, importFrom = "wow-command-client", log = () => {} } = {}) {
  if (!input) throw new TypeError("generate: `input` (an OpenAPI document: file, URL or object) is required");
  if (!out || typeof out !== "string") throw new TypeError("generate: `out` (a directory) is required");
  const { doc, source } = await load(input);
  const warnings = [];
  const warn = (text) => { warnings.push(text); log(`warning: ${text}`); };
  const model = readModel(doc, hints, warn);
  log(`${source}: ${model.commands.length} command operations in ${model.aggregates.size} aggregates`);

  // openapi-typescript builds its output with TypeScript's compiler API, which
  // TypeScript 7 (the native compiler; Vite's templates install it) does not
  // have: it fails at import with "reading 'createKeywordTypeNode'".
  const typescript = await import("typescript").then((ts) => ts.version ?? ts.default?.version, () => null);
  if (typescript && Number.parseInt(typescript, 10) >= 7) {
    throw new Error(`openapi-typescript needs TypeScript's compiler API, which TypeScript ${typescript} (found here) does not have. `
      + "Run the generator beside TypeScript 5, which leaves this project's TypeScript alone: "
      + "npx -p wow-command-client -p openapi-typescript -p typescript@5 wow-command-client generate …");
  }
  let openapiTS, astToString;
  try {
    ({ default: openapiTS, astToString } = await import("openapi-typescript"));
  } catch (e) {
    if (e?.code !== "ERR_MODULE_NOT_FOUND") throw e;
    throw new Error("generate needs the openapi-typescript package, which needs TypeScript 5: npm install --save-dev openapi-typescript typescript@5", { cause: e });
  }
  const header = headerComment(doc, source);
  const files = [];
  const write = async (rel, text) => {
    const file = path.join(out, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
    files.push(file);
  };
  const schema = astToString(await openapiTS(doc, { silent: true }));
  await write("schema.ts", `${header}\n${schema}`);
  await write("support.ts", support(header, importFrom));

  const byContext = new Map();
  for (const agg of [...model.aggregates.values()].sort((a, b) => a.tag.localeCompare(b.tag))) {
    await write(`${agg.alias}/${agg.name}.ts`, aggregateFile(header, agg));
    if (!byContext.has(agg.alias)) byContext.set(agg.alias, []);
    byContext.get(agg.alias).push(agg);
    log(`  ${agg.alias}/${agg.name}.ts: ${agg.commands.map((c) => c.fn).join(", ")}`);
  }
  const contexts = [...byContext.keys()].sort();
  for (const alias of contexts) {
    await write(`${alias}/index.ts`, contextFile(header, alias, byContext.get(alias), hints, importFrom));
  }
  const stated = doc.info?.["x-wow-version"];
  const wowVersion = [
    "/** The Wow version the document states (its `x-wow-version`): pass it to `WowClient.connect({ wow: wowVersion })`, which asks history in the query shape that version reads. */",
    `export const wowVersion: string | undefined = ${typeof stated === "string" ? JSON.stringify(stated) : "undefined"};`,
  ].join("\n");
  await write("index.ts", `${header}\n${contexts.map((a) => `export * as ${ident(a)} from "./${a}/index.js";`).join("\n")}\n${wowVersion}\n`);
  log(`wrote ${files.length} files to ${out}${warnings.length ? ` (${warnings.length} warnings)` : ""}`);
  return { files, commands: model.commands.length, aggregates: model.aggregates.size, warnings };
}

async function load(input) {
  if (typeof input === "object") return { doc: input, source: "(document)" };
  let text;
  if (/^https?:\/\//i.test(input)) {
    const response = await fetch(input, { headers: { accept: "application/json" } });
    if (!response.ok) throw new Error(`GET ${input} answered ${response.status}`);
    text = await response.text();
  } else {
    text = await readFile(input, "utf8");
  }
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`${input} is not JSON (${e.message}); Wow serves its OpenAPI document as JSON`);
  }
  const source = /^https?:\/\//i.test(input) ? new URL(input).pathname : path.basename(input);
  return { doc, source };
}

/** Reads the command operations and groups them by aggregate. */
export function readModel(doc, hints = {}, warn = () => {}) {
  if (!doc || typeof doc !== "object" || typeof doc.openapi !== "string" || !doc.openapi.startsWith("3.")) {
    throw new Error("not an OpenAPI 3 document (no `openapi: \"3.x\"`)");
  }
  if (!doc.paths || typeof doc.paths !== "object") throw new Error("the document has no `paths`");
  const docAlias = doc.info?.["x-wow-context-alias"];
  const opHints = hints.operations || {};
  const operations = [];
  for (const [route, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item || {})) {
      if (!op || typeof op !== "object" || !op.responses) continue;
      const params = [...(item.parameters || []), ...(op.parameters || [])];
      const isCommand = op.responses?.["200"]?.$ref === COMMAND_OK || params.some((p) => p?.$ref === WAIT_STAGE);
      if (isCommand) operations.push({ route, method, op, params });
    }
  }
  const aggregates = new Map();
  const commands = [];
  for (const { route, method, op, params } of operations.sort((a, b) => String(a.op.operationId).localeCompare(String(b.op.operationId)))) {
    const id = op.operationId;
    const where = `${method.toUpperCase()} ${route}${id ? ` (${id})` : ""}`;
    if (route === FACADE) {
      warn(`${where}: the command facade is not generated; it names commands by JVM class (Command-Type), the aggregate routes do not`);
      continue;
    }
    if (!COMMAND_METHODS.includes(method)) { warn(`${where}: ${method.toUpperCase()} is not a command method; skipped`); continue; }
    const parts = typeof id === "string" ? id.split(".") : [];
    if (parts.length < 3) { warn(`${where}: operationId is not <context>.<aggregate>.<command>; skipped`); continue; }
    const [alias, name] = parts;
    const tag = `${alias}.${name}`;
    let agg = aggregates.get(tag);
    if (!agg) {
      // A context other than the document's own carries its alias in paths (`/tck/…`); the
      // aggregate's event query route says whether this one does.
      const found = resourceOf(doc, tag, alias, docAlias);
      agg = { tag, alias, name, contextAlias: found?.aliasInPath ? alias : undefined, commands: [], resource: found?.resource };
      aggregates.set(tag, agg);
    }
    const cmd = readCommand(doc, { route, method, op, params, where, agg, hint: opHints[id] || {} }, warn);
    if (cmd) { agg.commands.push(cmd); commands.push(cmd); }
  }
  for (const [tag, agg] of aggregates) {
    if (!agg.commands.length) { aggregates.delete(tag); continue; }
    ownerIsId(agg);
    agg.state = stateOf(doc, agg);
    agg.events = eventsOf(doc, agg);
    for (const cmd of agg.commands) settle(cmd, agg, warn);
    agg.commands = agg.commands.filter((c) => !c.skip);
    const seen = new Map();
    for (const cmd of agg.commands) {
      const n = (seen.get(cmd.fn) || 0) + 1;
      seen.set(cmd.fn, n);
      if (n > 1) { warn(`${cmd.where}: a second command named ${cmd.fn}; generated as ${cmd.fn}${n}`); cmd.fn += n; }
    }
    if (!agg.commands.length) aggregates.delete(tag);
  }
  return { aggregates, commands: [...aggregates.values()].flatMap((a) => a.commands) };
}

function deref(doc, value) {
  let v = value;
  for (let i = 0; v && typeof v === "object" && typeof v.$ref === "string" && i < 16; i++) {
    if (!v.$ref.startsWith("#/")) return null;
    v = v.$ref.slice(2).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~")).reduce((o, k) => o?.[k], doc);
  }
  return v ?? null;
}

/** The scope and resource of a route: [/{alias}] [/tenant/{tenantId}] [/owner/{ownerId}] /{resource} … */
function splitRoute(route, alias, aliasInPath) {
  const segs = route.split("/").filter(Boolean);
  let i = 0;
  const scope = { contextAlias: false, tenant: false, owner: false };
  if (aliasInPath && segs[i] === alias) { scope.contextAlias = true; i++; }
  if (segs[i] === "tenant" && segs[i + 1] === "{tenantId}") { scope.tenant = true; i += 2; }
  if (segs[i] === "owner" && segs[i + 1] === "{ownerId}") { scope.owner = true; i += 2; }
  return { ...scope, resource: segs[i], rest: segs.slice(i + 1) };
}

/** The resource name from the aggregate's event query route (never a command's own path). */
function resourceOf(doc, tag, alias, docAlias) {
  for (const [route, item] of Object.entries(doc.paths)) {
    if (item?.post?.operationId === `${tag}.event.list_query`) {
      const split = splitRoute(route, alias, Boolean(docAlias) && alias !== docAlias);
      return { resource: split.resource, aliasInPath: split.contextAlias };
    }
  }
  return undefined;
}

function readCommand(doc, { route, method, op, params, where, agg, hint }, warn) {
  const resolved = params.map((p) => deref(doc, p)).filter(Boolean);
  const scope = splitRoute(route, agg.alias, Boolean(agg.contextAlias));
  const resource = agg.resource || scope.resource;
  if (!agg.resource) agg.resource = resource;
  if (!resource || scope.resource !== resource) {
    warn(`${where}: the path does not follow Wow's command pattern for resource \`${resource ?? "?"}\`; skipped`);
    return null;
  }
  const pathVars = [...route.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const pathParams = [];
  for (const name of pathVars) {
    const p = resolved.find((x) => x.in === "path" && x.name === name);
    if (!p) { warn(`${where}: path variable {${name}} has no parameter; skipped`); return null; }
    pathParams.push(name);
  }
  const queries = resolved.filter((p) => p.in === "query" || p.in === "cookie");
  if (queries.some((p) => p.required)) {
    warn(`${where}: required ${queries[0].in} parameters are not supported; skipped`);
    return null;
  }
  const headerVars = resolved
    .filter((p) => p.in === "header" && !/^(Command-|Accept$)/i.test(p.name))
    .map((p) => ({ name: p.name, key: p.name === "Wow-Space-Id" ? "spaceId" : camel(p.name), required: !!p.required }));
  const content = op.requestBody ? deref(doc, op.requestBody)?.content : undefined;
  let body = { kind: "none" };
  let title;
  if (content) {
    const json = content["application/json"];
    if (!json) { warn(`${where}: the body is not application/json (${Object.keys(content).join(", ")}); skipped`); return null; }
    const schema = json.schema;
    const target = deref(doc, schema) || {};
    title = target.title;
    const ref = typeof schema?.$ref === "string" && schema.$ref.startsWith("#/components/schemas/") ? schema.$ref.slice(21) : null;
    body = {
      kind: "json",
      ref,
      required: Array.isArray(target.required) && target.required.length > 0,
      hasIdField: !!target.properties?.id,
    };
  }
  const command = op.operationId.split(".").slice(2).join("_");
  return {
    where, operationId: op.operationId, route, method: method.toUpperCase(), command,
    fn: camel(command.replace(/^default_/, "")),
    summary: op.summary || title,
    pathParams, headerVars, body, hint,
    scope,
  };
}

function ownerIsId(agg) {
  const del = agg.commands.find((c) => c.method === "DELETE");
  const probe = del ? [del] : agg.commands;
  agg.ownerIsId = probe.every((c) => c.scope.owner && !c.pathParams.includes("id"));
}

/** Whether the command creates its aggregate, and where its aggregate id comes from. */
function settle(cmd, agg, warn) {
  const hasId = cmd.pathParams.includes("id");
  const h = cmd.hint;
  cmd.void = !!h.void;
  const inferredCreate = cmd.method === "POST" && !hasId;
  cmd.allowCreate = h.allowCreate ?? (agg.ownerIsId && inferredCreate);
  cmd.create = h.create ?? (!agg.ownerIsId && inferredCreate && !cmd.allowCreate);
  if (hasId) cmd.idFrom = "route.id";
  else if (agg.ownerIsId) cmd.idFrom = "route.ownerId";
  else if (cmd.body.hasIdField) cmd.idFrom = "body.id";
  else if (cmd.create) cmd.idFrom = null;
  else {
    warn(`${cmd.where}: neither the path nor the body names the aggregate id, and it does not create its aggregate; skipped`);
    cmd.skip = true;
  }
}

function stateOf(doc, agg) {
  for (const item of Object.values(doc.paths)) {
    const op = item?.get;
    if (op?.operationId === `${agg.tag}.aggregate.load` || op?.operationId === `${agg.tag}.tenant.aggregate.load`) {
      const ref = op.responses?.["200"]?.content?.["application/json"]?.schema?.$ref;
      if (typeof ref === "string") return ref.replace("#/components/schemas/", "");
    }
  }
  return null;
}

function eventsOf(doc, agg) {
  const schemas = doc.components?.schemas || {};
  const name = Object.keys(schemas).find((k) => k.startsWith(`${agg.tag}.`) && k.endsWith("AggregatedDomainEventStream"));
  if (!name) {
    for (const item of Object.values(doc.paths)) {
      const ref = item?.post?.operationId === `${agg.tag}.event.list_query`
        ? item.post.responses?.["200"]?.content?.["application/json"]?.schema?.items?.$ref : undefined;
      if (typeof ref === "string") return ref.replace("#/components/schemas/", "");
    }
  }
  return name || null;
}

// ---------------------------------------------------------------- output

function headerComment(doc, source) {
  const info = doc.info || {};
  return [
    `// Generated by \`wow-command-client generate\` from ${source}:`,
    `// ${info.title ?? "(untitled)"} ${info.version ?? ""} (x-wow-version ${info["x-wow-version"] ?? "unknown"}).`,
    "// Do not edit; generate again when the document changes.",
    "",
  ].join("\n");
}

function support(header, importFrom) {
  return `${header}
import type { Command } from "${importFrom}";

/** What each call may add to a command: everything the route does not decide. */
export type CommandOptions = Omit<Command, "aggregate" | "action" | "method" | "path" | "body" | "create" | "idInPath">;
/** A void command (\`@VoidCommand\`) is only ever waited for at SENT. */
export type VoidCommandOptions = Omit<CommandOptions, "waitStage" | "waitTailStage" | "waitContext" | "waitProcessor" | "waitFunction" | "expectedVersion">;

/** One path segment: a non-empty value, percent-encoded. */
export function segment(value: string | number | boolean, field: string): string {
  const text = String(value ?? "");
  if (text === "" || value === null || value === undefined) {
    throw new TypeError(\`\${field} is required for this command's route\`);
  }
  return encodeURIComponent(text);
}

/** Joins the route's facts with the caller's options; the route wins. */
export function command(
  options: CommandOptions | undefined,
  route: Pick<Command, "aggregate" | "method" | "path" | "body" | "create">,
  headers: Record<string, string | undefined>,
  extra: Partial<Command> = {},
): Command {
  const merged: Record<string, string> = { ...(options?.headers ?? {}) };
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) merged[name] = String(value);
  return { ...options, ...extra, ...route, idInPath: false, headers: merged };
}
`;
}

function aggregateFile(header, agg) {
  const P = pascal(agg.name);
  const lines = [
    `/** The aggregate \`${agg.tag}\`: resource \`${agg.resource}\`${agg.ownerIsId ? ", its id is its owner's id" : ""}. */`,
    `export const aggregate = { context: ${JSON.stringify(agg.alias)}, name: ${JSON.stringify(agg.name)}, resource: ${JSON.stringify(agg.resource)} } as const;`,
  ];
  if (agg.state) lines.push("", `/** The aggregate's state, as its state route answers it. */`, `export type ${P}State = Schemas[${JSON.stringify(agg.state)}];`);
  if (agg.events) {
    lines.push("", `/** One event of the aggregate's history (a domain event stream's body element). */`,
      `export type ${P}Event = Schemas[${JSON.stringify(agg.events)}]["body"][number];`,
      `/** The body of the event named N. */`,
      `export type ${P}EventBody<N extends ${P}Event["name"]> = Extract<${P}Event, { name: N }>["body"];`);
  }
  for (const c of agg.commands) {
    const T = pascal(c.fn);
    const opType = `Operations[${JSON.stringify(c.operationId)}]`;
    const routeFields = [];
    for (const name of c.pathParams) routeFields.push(`  ${safeKey(name)}: ${opType}["parameters"]["path"][${JSON.stringify(name)}];`);
    if (c.idFrom === null) {
      routeFields.push(`  /** The new aggregate's id (sent as \`Command-Aggregate-Id\`); without it the server picks one. */\n  id?: string;`);
    }
    for (const h of c.headerVars) {
      routeFields.push(`  ${safeKey(h.key)}${h.required ? "" : "?"}: NonNullable<${opType}["parameters"]["header"]>[${JSON.stringify(h.name)}];`);
    }
    lines.push("", `/** What the route of \`${c.operationId}\` needs. */`,
      routeFields.length ? `export interface ${T}Route {\n${routeFields.join("\n")}\n}` : `export type ${T}Route = Record<string, never>;`);
    const bodyType = c.body.kind === "none" ? "Record<string, never>"
      : c.body.ref ? `Schemas[${JSON.stringify(c.body.ref)}]`
      : `NonNullable<${opType}["requestBody"]>["content"]["application/json"]`;
    lines.push(`export type ${T}Body = ${bodyType};`);
    const facts = [
      c.create ? "creates its aggregate (the server picks the id unless the body names it)" : null,
      c.allowCreate ? "may create its aggregate (allow-create)" : null,
      c.void ? "a void command: waited for at SENT" : null,
    ].filter(Boolean);
    const pathExpr = "`" + c.route.replace(/\{([^}]+)\}/g, (_, n) => `\${segment(route[${JSON.stringify(n)}], ${JSON.stringify(`route.${n}`)})}`) + "`";
    const aggFields = [`resource: ${JSON.stringify(agg.resource)}`];
    if (agg.contextAlias) aggFields.unshift(`contextAlias: ${JSON.stringify(agg.contextAlias)}`);
    if (c.pathParams.includes("tenantId")) aggFields.push(`tenantId: String(route.tenantId)`);
    if (c.pathParams.includes("ownerId")) aggFields.push(`ownerId: String(route.ownerId)`);
    if (c.idFrom === "route.id") aggFields.push(`id: String(route.id)`);
    else if (c.idFrom === "route.ownerId") aggFields.push(`id: String(route.ownerId)`);
    else if (c.idFrom === null) aggFields.push(`id: route.id`);
    else if (c.idFrom === "body.id") aggFields.push(`id: (body as { id?: unknown })?.id == null ? undefined : String((body as { id?: unknown }).id)`);
    const headerObj = c.headerVars.map((h) => `${JSON.stringify(h.name)}: route[${JSON.stringify(h.key)}]`).join(", ");
    const optionsType = c.void ? "VoidCommandOptions" : "CommandOptions";
    const bodyOptional = c.body.kind === "none" || !c.body.required;
    const bodyParam = bodyOptional ? `body: ${T}Body = {} as ${T}Body` : `body: ${T}Body`;
    const routeOptional = bodyOptional && (routeFields.length === 0 || (c.idFrom === null && routeFields.length === 1));
    const routeParam = routeOptional ? `route: ${T}Route = {}` : `route: ${T}Route`;
    lines.push(
      `/**`,
      ` * ${c.summary ? `${oneLine(c.summary)}: ` : ""}\`${c.method} ${c.route}\` (\`${c.operationId}\`)${facts.length ? `; ${facts.join("; ")}` : ""}.`,
      ` */`,
      `export function ${c.fn}(${routeParam}, ${bodyParam}, options?: ${optionsType}) {`,
      `  return command(options, {`,
      `    aggregate: { ${aggFields.join(", ")} },`,
      `    method: ${JSON.stringify(c.method)},`,
      `    path: ${pathExpr},`,
      `    create: ${c.create},`,
      `    body,`,
      `  }, {${headerObj ? ` ${headerObj} ` : ""}}${c.void ? `, { waitStage: "SENT" }` : ""});`,
      `}`,
    );
  }
  lines.push("", `/** Every command of \`${agg.tag}\`, by name. */`,
    `export const commands = { ${agg.commands.map((c) => `${c.fn}`).join(", ")} } as const;`, "");
  const body = lines.join("\n");
  return [header, ...imports(body), "", body].join("\n");
}

/**
 * The imports and aliases an aggregate file's body uses, and only those: apps
 * compile generated code under `noUnusedLocals` (Vite's react-ts template does).
 */
function imports(body) {
  const uses = (name) => new RegExp(`\\b${name}(?![\\w$])`).test(body);
  const calls = (name) => new RegExp(`\\b${name}\\(`).test(body);
  const schema = [uses("Schemas") && "components", uses("Operations") && "operations"].filter(Boolean);
  const support = [calls("command") && "command", calls("segment") && "segment",
    uses("CommandOptions") && "type CommandOptions", uses("VoidCommandOptions") && "type VoidCommandOptions"].filter(Boolean);
  return [
    schema.length && `import type { ${schema.join(", ")} } from "../schema.js";`,
    support.length && `import { ${support.join(", ")} } from "../support.js";`,
    schema.length > 0 && "",
    uses("Schemas") && `type Schemas = components["schemas"];`,
    uses("Operations") && `type Operations = operations;`,
  ].filter((line) => line !== false);
}

function contextFile(header, alias, aggs, hints, importFrom) {
  const domain = [...new Set(hints.errorCodes?.[alias] || [])].sort();
  return [header,
    `import type { WowErrorCode, ClientErrorCode } from "${importFrom}";`,
    "",
    ...aggs.map((a) => `export * as ${ident(a.name)} from "./${a.name}.js";`),
    "",
    `/** Every code a \`CommandError.code\` can carry for this context: Wow's own, the client's${domain.length ? ", and the context's domain codes" : ""}. */`,
    `export type ErrorCode = WowErrorCode | ClientErrorCode${domain.map((c) => ` | ${JSON.stringify(c)}`).join("")};`,
    `/** The context's own codes (error events and handler codes), from the generator's hints: the document does not list them. */`,
    `export const domainErrorCodes = ${JSON.stringify(domain)} as const;`,
    "",
  ].join("\n");
}

function camel(text) {
  const words = String(text).split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w[0].toLowerCase() + w.slice(1))).join("") || "command";
}
function pascal(text) { const c = camel(text); return c[0].toUpperCase() + c.slice(1); }
function ident(text) {
  const c = camel(text);
  return /^[A-Za-z_$]/.test(c) ? c : `_${c}`;
}
function safeKey(name) { return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name); }
function oneLine(text) { return String(text).replace(/\s+/g, " ").replace(/\*\//g, "*\\/").trim(); }
