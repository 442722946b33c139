// The per-command counts of bench 4g held to a ceiling (bench/crossings-budget.json),
// as the size gate holds the download: the calls the client module makes into
// JS per `sendAndWait`, one after another, and the page's calls into the
// browser (timers, tasks, locks, IndexedDB, channels, `TextDecoder.decode`),
// for each built-in journal, in Chromium against the gateway. A count, not a
// time: a change that adds a crossing fails here, one that removes some lowers
// the ceiling in its commit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";
import { createAccount, root } from "../support/gateway.mjs";
import { countCalls } from "../../bench/counters.mjs";

const env = gatewayAndChromium({ quiet: true });
const budget = JSON.parse(readFileSync(join(root, "bench/crossings-budget.json"), "utf8"));

test("each command's calls into JS and into the browser stay at or under their ceilings", async () => {
  const context = await env.browser.newContext();
  await context.addInitScript(countCalls);
  const page = await context.newPage();
  await page.goto(`${env.gateway.base}/pkg/index.js`);
  const account = await createAccount(env.gateway.base, "crossings");
  const found = {};
  for (const storage of Object.keys(budget.ceilings)) {
    found[storage] = await page.evaluate(async ({ storage, account, ns, n }) => {
      const { default: init, WowClient } = await import("/pkg/index.js");
      await init();
      const client = await WowClient.connect({ user: null, baseUrl: location.origin, storage, namespace: ns, timeoutMs: 10_000 });
      const lock = { aggregate: { resource: "account", id: account }, action: "lock_amount", body: { amount: 1 } };
      for (let i = 0; i < 3; i++) await client.sendAndWait(lock);
      const crossed = new Map(window.crossed), platform = new Map(window.platform);
      for (let i = 0; i < n; i++) await client.sendAndWait(lock);
      const per = (now, then) => Object.fromEntries([...now].map(([k, v]) => [k, (v - (then.get(k) ?? 0)) / n]).filter(([, v]) => v > 0));
      const intoJs = Object.values(per(window.crossed, crossed)).reduce((a, b) => a + b, 0);
      await client.clear();
      client.free();
      return { intoJs, platform: per(window.platform, platform) };
    }, { storage, account, ns: unique("crossings"), n: 20 });
  }
  await context.close();
  console.log(`crossings: ${Object.entries(found).map(([s, g]) => `${s} ${g.intoJs} into JS, ${JSON.stringify(g.platform)}`).join("; ")}`);
  for (const [storage, ceiling] of Object.entries(budget.ceilings)) {
    const got = found[storage];
    assert.ok(got.intoJs <= ceiling.intoJs, `${storage}: ${got.intoJs} calls into JS per command, over the ceiling of ${ceiling.intoJs}`);
    for (const [name, count] of Object.entries(got.platform)) {
      assert.ok(count <= (ceiling.platform[name] ?? 0),
        `${storage}: ${name} ${count} per command, over the ceiling of ${ceiling.platform[name] ?? 0}: ${JSON.stringify(got.platform)}`);
    }
  }
});
