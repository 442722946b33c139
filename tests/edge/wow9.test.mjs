// What Wow 9 changed on a command client's wire, through WowClient in Node
// against the test gateway, which follows Wow 9 where this file says so:
//   - a `Command-Header-<key>` whose key Wow reserves is refused by the
//     gateway (400 IllegalArgument, nothing copied), so the client refuses
//     it when the command is given: a TypeError, nothing written, nothing sent.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount, startGateway } from "../support/gateway.mjs";
import { WowClient } from "../../pkg/node.js";
import { memoryAdapter } from "../../pkg/adapters.js";

const unique = (p) => `${p}-${Math.random().toString(36).slice(2, 10)}`;

let gateway;
before(async () => { gateway = await startGateway({ quiet: true }); });
after(async () => { await gateway?.stop(); });

const lock = (id, headers) => ({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 }, headers });

test("the gateway, as Wow 9, refuses a Command-Header- key the framework reserves, and appends nothing", async () => {
  const id = await createAccount(gateway.base);
  for (const [name, ok] of [["Command-Header-trace_id", false], ["command-header-Command_Wait_Stage", false],
    ["Command-Header-compensate.id", false], ["Command-Header-app", true]]) {
    const requestId = crypto.randomUUID();
    const r = await fetch(`${gateway.base}/account/${id}/lock_amount`, {
      method: "PUT", body: JSON.stringify({ amount: 1 }),
      headers: { "Content-Type": "application/json", "Command-Request-Id": requestId, [name]: "spoofed" } });
    const answer = await r.json();
    if (ok) {
      assert.equal(r.status, 200, JSON.stringify(answer));
    } else {
      assert.equal(r.status, 400, JSON.stringify(answer));
      assert.equal(answer.errorCode, "IllegalArgument");
      assert.match(answer.errorMsg, /is reserved by the framework/);
    }
    assert.equal(await gateway.stored("account", id, requestId), ok ? 1 : 0, name);
  }
});

test("a command carrying a header key Wow reserves is refused when given: a TypeError naming the rule and the key, nothing written or sent", async () => {
  const id = await createAccount(gateway.base);
  const map = new Map();
  const client = await WowClient.connect({ baseUrl: gateway.base, user: null, storage: memoryAdapter(map), namespace: unique("wow9") });
  const written = map.size;
  for (const name of ["Command-Header-trace_id", "Command-Header-COMMAND_OPERATOR", "command-header-command_wait_stage",
    "Command-Header-traceparent", "Command-Header-app_id"]) {
    const e = await client.send(lock(id, { [name]: "spoofed" })).then(() => assert.fail("accepted"), (e) => e);
    assert.ok(e instanceof TypeError, String(e));
    const key = name.slice("Command-Header-".length);
    assert.match(e.message, new RegExp(`^send: command\\.headers\\.${name}: Wow reserves the message header key \`${key}\`.*IllegalArgument`));
  }
  assert.equal(map.size, written, "nothing written");
  assert.deepEqual(await client.intents(), []);
  assert.equal((await gateway.history("account", id)).length, 1, "only the create reached history");
  // The app's own keys go through.
  const sent = await client.sendAndWait(lock(id, { "Command-Header-app": "oms" }));
  assert.equal(sent.errorCode, "Ok");
  assert.equal((await gateway.history("account", id)).length, 2);
  client.free();
});
