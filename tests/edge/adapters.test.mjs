// Every shipped storage adapter under concurrent deliveries of one identity:
// inside one process (two consumers, three deliveries at once), and across
// two processes where the adapter can be shared by processes (files). The
// Workers KV and Durable Object adapters meet their real runtime in
// tests/edge/workerd.test.mjs; here they run over in-memory stand-ins of
// the binding shapes they take (KvNamespaceLike, DurableObjectStorageLike).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdempotentConsumer } from "../../pkg/consumer-node.js";
import { durableObjectAdapter, kvAdapter, memoryAdapter } from "../../pkg/adapters.js";
import { fileAdapter } from "../../pkg/node-adapters.js";

const tick = () => new Promise((r) => setTimeout(r, Math.random() * 3));

/** A Workers KV namespace's shape over a Map, with latency. */
function kvNamespace() {
  const m = new Map();
  return {
    async get(k) { await tick(); return m.get(k) ?? null; },
    async put(k, v) { await tick(); m.set(k, v); },
    async delete(k) { await tick(); m.delete(k); },
    async list({ prefix = "" }) { await tick(); return { keys: [...m.keys()].filter((k) => k.startsWith(prefix)).map((name) => ({ name })), list_complete: true }; },
  };
}

/** A Durable Object storage's shape over a Map: transactions run one at a time, as the object's do. */
function durableObjectStorage() {
  const m = new Map();
  let chain = Promise.resolve();
  const storage = {
    async get(k) { await tick(); return m.get(k); },
    async put(k, v) { await tick(); m.set(k, v); },
    async delete(k) { await tick(); return m.delete(k); },
    async list({ prefix = "" }) { await tick(); return new Map([...m].filter(([k]) => k.startsWith(prefix))); },
    transaction(closure) {
      const run = chain.then(() => closure(storage));
      chain = run.catch(() => {});
      return run;
    },
  };
  return storage;
}

const adapters = {
  memoryAdapter: () => ({ storage: memoryAdapter() }),
  fileAdapter: () => ({ storage: fileAdapter(mkdtempSync(join(tmpdir(), "wow-file-adapter-"))) }),
  kvAdapter: () => ({ storage: kvAdapter(kvNamespace()), allowDuplicateEffects: true }),
  durableObjectAdapter: () => ({ storage: durableObjectAdapter(durableObjectStorage()) }),
};

for (const [name, make] of Object.entries(adapters)) {
  test(`${name}: three deliveries of one identity at once in one process, over two consumers, run it once`, async () => {
    const options = make();
    const [a, b] = [await IdempotentConsumer.open({ ...options, leaseMs: 5_000 }),
      await IdempotentConsumer.open({ ...options, leaseMs: 5_000 })];
    for (const identity of ["evt-1", "evt-2", "evt-3"]) {
      let effects = 0;
      const effect = async () => { effects += 1; await new Promise((r) => setTimeout(r, 60)); return `done ${identity}`; };
      const outcomes = await Promise.all([a.handle(identity, effect), a.handle(identity, effect), b.handle(identity, effect)]);
      assert.equal(effects, 1, `${identity}: ${JSON.stringify(outcomes.map((o) => o.status))}`);
      assert.deepEqual(outcomes.map((o) => o.status).sort(), ["ran", "skipped", "skipped"]);
      for (const o of outcomes) assert.equal(o.result, `done ${identity}`);
    }
    if (!options.allowDuplicateEffects) {
      assert.ok(await IdempotentConsumer.open({ storage: options.storage }), "opens without accepting duplicates");
    }
  });
}

test("kvAdapter: without allowDuplicateEffects a consumer refuses to open (two processes could both run an effect)", async () => {
  await assert.rejects(IdempotentConsumer.open({ storage: kvAdapter(kvNamespace()) }),
    (e) => e.code === "StorageCannotExclude" && /allowDuplicateEffects/.test(e.message));
});

const script = new URL("./node-process.mjs", import.meta.url).pathname;
function race(dir, identities, startAt) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [script, "race", dir, "race", "http://unused.invalid",
      JSON.stringify({ identities, startAt })], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    proc.stdout.on("data", (d) => { out += d; });
    proc.once("exit", (code) => code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}: ${out}`)));
  });
}

test("fileAdapter: two Node.js processes delivering the same identities at once over one directory run each once", async () => {
  const dir = mkdtempSync(join(tmpdir(), "wow-file-race-"));
  const identities = Array.from({ length: 8 }, (_, i) => `order-${i}`);
  // Both processes load the module first, then deliver at the same instant.
  const startAt = Date.now() + 1_500;
  const [first, second] = await Promise.all([race(dir, identities, startAt), race(dir, identities, startAt)]);
  const log = readFileSync(join(dir, "effects.log"), "utf8").trim().split("\n");
  const runs = {};
  for (const line of log) (runs[line.split(" ")[0]] ??= []).push(line);
  for (const identity of identities) {
    assert.equal(runs[identity]?.length, 1, `${identity} ran ${runs[identity]?.length} times: ${JSON.stringify(runs[identity])}`);
    const statuses = [first, second].map((o) => o.find((x) => x.identity === identity));
    assert.ok(statuses.every((s) => !s.error), JSON.stringify(statuses));
    assert.deepEqual(statuses.map((s) => s.status).sort(), ["ran", "skipped"]);
    assert.equal(statuses[0].by, statuses[1].by, "both report the one run's result");
  }
});
