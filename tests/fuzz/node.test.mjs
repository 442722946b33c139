// The JS boundary fuzz (boundary.js) in Node.js against a fresh gateway.
// FUZZ_RUNS (default 1000) and FUZZ_SEED (default 1) size and seed it;
// `npm run fuzz` runs a longer share.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { startGateway } from "../support/gateway.mjs";
import { WowClient, CommandError } from "../../pkg/node.js";
import { IdempotentConsumer, EffectError } from "../../pkg/consumer-node.js";
import { memoryAdapter } from "../../pkg/adapters.js";
import { fuzzBoundary } from "./boundary.js";

let gateway;
before(async () => { gateway = await startGateway({ quiet: true }); });
after(async () => { await gateway?.stop(); });

test("every public call settles with a typed error or a value, whatever it is given (Node.js)", { timeout: 20 * 60_000 }, async () => {
  const escaped = [];
  const onError = (e) => escaped.push(e);
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onError);
  try {
    const report = await fuzzBoundary({
      sdk: { WowClient, CommandError, IdempotentConsumer, EffectError, memoryAdapter }, fc, base: gateway.base,
      runs: Number(process.env.FUZZ_RUNS ?? 1000), seed: Number(process.env.FUZZ_SEED ?? 1),
      print: (line) => console.log(line), escapes: () => escaped.splice(0),
    });
    assert.deepEqual(report.failures, []);
    assert.ok(report.tried > 0);
  } finally {
    process.off("uncaughtException", onError);
    process.off("unhandledRejection", onError);
  }
});
