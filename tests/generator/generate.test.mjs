// The command generator: against Wow's own example document (it compiles
// under `tsc --strict`, unsupported shapes are named), and against the test
// gateway's document at run time (the generated cart and sales-order
// commands go through WowClient, and the gateway's history holds them).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "../../generator/generate.mjs";
import { root, startGateway } from "../support/gateway.mjs";

const reference = join(process.env.WOW_REFERENCE_DIR ?? join(root, "tests/fixtures/wow-8.10.10"), "example-domain-openapi.json");
const tsc = join(root, "node_modules/.bin/tsc");

/** Type-checks (and, with `outDir`, emits) the generated files under --strict. */
function compile(dir, outDir) {
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      strict: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext",
      noUnusedLocals: false, skipLibCheck: false, types: [], lib: ["es2022", "esnext.disposable", "dom"],
      paths: { "wow-command-client": [join(root, "pkg/index.d.ts")] },
      ...(outDir ? { outDir, declaration: false } : { noEmit: true }),
    },
    include: ["**/*.ts"], exclude: ["dist"],
  }));
  try {
    execFileSync(tsc, ["-p", dir], { encoding: "utf8", stdio: "pipe" });
  } catch (e) {
    assert.fail(`tsc --strict failed:\n${e.stdout}${e.stderr}`);
  }
}

let gateway;
before(async () => { gateway = await startGateway({ quiet: true }); });
after(async () => { await gateway?.stop(); });

test("Wow's example document: every aggregate command, compiled under --strict", async () => {
  const out = mkdtempSync(join(tmpdir(), "wow-generated-reference-"));
  const lines = [];
  const { commands, aggregates, warnings } = await generate({ input: reference, out, log: (l) => lines.push(l) });
  // 29 aggregate command operations; the facade (POST /wow/command/send) is named and left out.
  assert.equal(commands, 29);
  assert.equal(aggregates, 5);
  assert.deepEqual(warnings.map((w) => w.split(":")[0]), ["POST /wow/command/send (wow.command.send)"]);
  assert.ok(lines.some((l) => l.includes("example/cart.ts: addCartItem")), lines.join("\n"));
  compile(out);
  const cart = readFileSync(join(out, "example/cart.ts"), "utf8");
  assert.match(cart, /x-wow-version 8\.10\.10/);
  // The version it states is exported, for `connect({ wow })`.
  assert.match(readFileSync(join(out, "index.ts"), "utf8"), /export const wowVersion: string \| undefined = "8\.10\.10";/);
  assert.match(cart, /export type CartState = Schemas\["example\.cart\.CartState"\]/);
  const order = readFileSync(join(out, "example/order.ts"), "utf8");
  assert.match(order, /export function createOrder\(route: CreateOrderRoute, body: CreateOrderBody/);
  assert.match(order, /create: true/);
  // A second context's aggregate carries its alias in paths and in the command.
  const tck = readFileSync(join(out, "tck/mock_aggregate.ts"), "utf8");
  assert.match(tck, /contextAlias: "tck", resource: "mock_aggregate"/);
});

test("shapes the mapping does not support are named, never generated wrong", async () => {
  const doc = JSON.parse(readFileSync(reference, "utf8"));
  const op = (body, extra = {}) => ({
    operationId: "example.cart.odd", tags: ["example.cart"],
    parameters: [{ $ref: "#/components/parameters/wow.Command-Wait-Stage" }, { $ref: "#/components/parameters/wow.ownerId" }],
    requestBody: body, responses: { 200: { $ref: "#/components/responses/wow.CommandOk" } }, ...extra,
  });
  doc.paths["/owner/{ownerId}/cart/upload"] = { put: { ...op({ content: { "multipart/form-data": { schema: { type: "object" } } } }), operationId: "example.cart.upload" } };
  doc.paths["/owner/{ownerId}/cart/{slot}/odd"] = { put: op(undefined) };
  doc.paths["/sales-order/anonymous"] = { put: { ...op(undefined), operationId: "example.order.anonymous", parameters: [{ $ref: "#/components/parameters/wow.Command-Wait-Stage" }] } };
  doc.paths["/owner/{ownerId}/cart/get_it"] = { get: { ...op(undefined), operationId: "example.cart.get_it" } };
  doc.paths["/owner/{ownerId}/cart/nameless"] = { put: { ...op(undefined), operationId: "nameless" } };
  const out = mkdtempSync(join(tmpdir(), "wow-generated-odd-"));
  const { warnings } = await generate({ input: doc, out });
  const said = (fragment) => assert.ok(warnings.some((w) => w.includes(fragment)), `a warning with ${fragment}:\n${warnings.join("\n")}`);
  said("PUT /owner/{ownerId}/cart/upload (example.cart.upload): the body is not application/json");
  said("PUT /owner/{ownerId}/cart/{slot}/odd (example.cart.odd): path variable {slot} has no parameter");
  said("PUT /sales-order/anonymous (example.order.anonymous): neither the path nor the body names the aggregate id");
  said("GET /owner/{ownerId}/cart/get_it (example.cart.get_it): GET is not a command method");
  said("PUT /owner/{ownerId}/cart/nameless (nameless): operationId is not <context>.<aggregate>.<command>");
  const cart = readFileSync(join(out, "example/cart.ts"), "utf8");
  for (const fn of ["upload", "odd", "getIt", "nameless"]) assert.doesNotMatch(cart, new RegExp(`function ${fn}\\(`));
  await assert.rejects(generate({ input: { swagger: "2.0" }, out }), /not an OpenAPI 3 document/);
  await assert.rejects(generate({ input: join(root, "README.md"), out }), /is not JSON/);
});

test("the gateway's own document: generated cart and sales-order commands through WowClient", async () => {
  const out = mkdtempSync(join(tmpdir(), "wow-generated-gateway-"));
  const hints = JSON.parse(readFileSync(join(root, "www/commands.hints.json"), "utf8"));
  const { warnings } = await generate({ input: `${gateway.base}/v3/api-docs`, out, hints });
  assert.deepEqual(warnings, []);
  const dist = join(out, "dist");
  compile(out, dist);
  const cart = await import(join(dist, "example/cart.js"));
  const order = await import(join(dist, "example/order.js"));
  const example = readFileSync(join(out, "example/index.ts"), "utf8");
  assert.match(example, /export type ErrorCode = WowErrorCode \| ClientErrorCode \| "OrderPayDuplicated";/);

  const { WowClient, CommandError } = await import(join(root, "pkg/node.js"));
  const client = await WowClient.connect({ user: null, baseUrl: gateway.base, storage: "memory", timeoutMs: 5000 });
  const owner = `owner-${Date.now()}`;
  // Allow-create on an aggregate whose id is its owner's: no create flag, the owner id is the id.
  const added = cart.addCartItem({ ownerId: owner }, { productId: "p-1", quantity: 2 }, { intentKey: `${owner}/add` });
  assert.deepEqual([added.method, added.path, added.create, added.aggregate.id], ["POST", `/owner/${owner}/cart/add_cart_item`, false, owner]);
  const r1 = await client.sendAndWait(added);
  assert.equal(r1.aggregateId, owner);
  await client.sendAndWait(cart.changeQuantity({ ownerId: owner }, { productId: "p-1", quantity: 5 }));
  // A void command is waited for at SENT, whatever the caller's default.
  const viewed = cart.viewCart({ ownerId: owner });
  assert.equal(viewed.waitStage, "SENT");
  assert.equal((await client.sendAndWait(viewed)).stage, "SENT");
  assert.equal(await gateway.stored("cart", owner, r1.requestId), 1);
  const state = await (await fetch(`${gateway.base}/owner/${owner}/cart/state`)).json();
  assert.deepEqual(state.items, [{ productId: "p-1", quantity: 5 }]);

  // A create: the server picks the id; the route's tenant and owner come from the generated route type.
  const tenant = `t-${Date.now()}`;
  const created = await client.sendAndWait(order.createOrder({ tenantId: tenant, ownerId: owner }, {
    items: [{ productId: "p-1", price: 10, quantity: 5 }], fromCart: true,
    address: { country: "China", province: "Shanghai", city: "Shanghai", district: "Huangpu", detail: "1 Road" },
  }));
  assert.equal(created.result.totalAmount, 50);
  const orderId = created.aggregateId;
  assert.ok(orderId, "the server chose an id");
  const paid = await client.sendAndWait(order.payOrder({ tenantId: tenant, id: orderId }, { paymentId: "pay-1", amount: 50 }));
  assert.equal(paid.aggregateVersion, 2);
  assert.equal(await gateway.stored(`tenant/${tenant}/sales-order`, orderId, paid.requestId), 1);
  // The error event's code is one the generated union names.
  const again = await client.sendAndWait(order.payOrder({ tenantId: tenant, id: orderId }, { paymentId: "pay-2", amount: 1 }))
    .then(() => null, (e) => e);
  assert.ok(again instanceof CommandError, String(again));
  assert.equal(again.code, "OrderPayDuplicated");
  // Route values are checked before anything is built.
  assert.throws(() => order.payOrder({ tenantId: tenant, id: "" }, { paymentId: "x", amount: 1 }), /route\.id is required/);
  client.free();
});
