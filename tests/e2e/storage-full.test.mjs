// A full store, met where users meet it: through `WowClient` in Chromium
// against the gateway. The page's own data fills the origin's storage up to a
// few KB, ~40 KB or ~200 KB of what is left; every command must still go out
// (each write of the client makes room by the journal's rule: settled intents,
// keyless first, oldest first), exactly once, and the app's data and every
// intent still waiting for a decision must be untouched.
import { test } from "node:test";
import assert from "node:assert/strict";
import { gatewayAndChromium, unique } from "../support/e2e.mjs";
import { createAccount as createAccountOn } from "../support/gateway.mjs";

const env = gatewayAndChromium({ quiet: true });

const createAccount = () => createAccountOn(env.gateway.base, "full");

/** A page with `window.client` over `storage` and the helpers below. */
async function openPage(context, storage) {
  const page = await context.newPage();
  await page.goto(`${env.gateway.base}/pkg/index.js`);
  await page.evaluate(async (storage) => {
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    window.client = await WowClient.connect({ user: null, baseUrl: location.origin, storage, namespace: "full", timeoutMs: 10_000 });
    /** Fills localStorage with the app's own keys until `freeChars` are left (within a few chars). */
    window.fillLocalStorage = (freeChars) => {
      localStorage.setItem("app/reserve", "r".repeat(freeChars));
      let chunk = 1 << 20, n = 0;
      while (chunk >= 1) {
        try { localStorage.setItem(`app/fill/${n}`, "f".repeat(chunk)); n += 1; } catch { chunk >>= 1; }
      }
      localStorage.removeItem("app/reserve");
      return n;
    };
    /** The app's own localStorage data, as key → length. */
    window.appData = () => Object.fromEntries(Object.keys(localStorage).filter((k) => k.startsWith("app/"))
      .map((k) => [k, localStorage.getItem(k).length]));
    /** `count` commands one after another; keyed ones get a fresh intentKey each. */
    window.sendMany = async (id, count, keyed) => {
      const results = [];
      for (let i = 0; i < count; i += 1) {
        const command = { aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } };
        if (keyed) command.intentKey = `full/${id}/${i}`;
        try {
          const r = await window.client.sendAndWait(command);
          results.push({ ok: true, requestId: r.requestId });
        } catch (e) {
          results.push({ ok: false, code: e.code, message: String(e.message).slice(0, 300) });
        }
      }
      return results;
    };
  }, storage);
  return page;
}

/** An intent left waiting for the caller's decision (a version conflict): it must survive every eviction. */
async function leaveAConflict(page, id) {
  const conflict = await page.evaluate(async (id) => {
    const e = await window.client.sendAndWait({ aggregate: { resource: "account", id }, action: "lock_amount",
      body: { amount: 1 }, expectedVersion: 999 }).catch((e) => e);
    return { outcome: e.outcome, intentId: e.intentId };
  }, id);
  assert.equal(conflict.outcome, "conflict");
  return conflict;
}

/** Every requestId was appended exactly once. */
async function appendedOnce(id, results) {
  const counts = await Promise.all(results.map((r) => env.gateway.stored("account", id, r.requestId)));
  assert.deepEqual(counts.filter((c) => c !== 1), [], "each command appended exactly once");
}

const summarize = (results) => {
  const failed = results.filter((r) => !r.ok);
  return `${results.length - failed.length} succeeded, ${failed.length} refused; first refusal: ${JSON.stringify(failed[0])}`;
};

for (const { freeChars, keyed, count } of [
  { freeChars: 3_000, keyed: false, count: 40 },
  { freeChars: 20_000, keyed: false, count: 120 },
  { freeChars: 20_000, keyed: true, count: 120 },
  { freeChars: 100_000, keyed: false, count: 400 },
]) {
  const label = `${freeChars * 2 / 1000} KB`;
  test(`a full localStorage (${label} left, ${keyed ? "keyed" : "keyless"} intents): ${count} commands through WowClient all go out, once`, async () => {
    const context = await env.browser.newContext();
    const id = await createAccount();
    const page = await openPage(context, "localStorage");
    const conflict = await leaveAConflict(page, id);
    const before = await page.evaluate((free) => { window.fillLocalStorage(free); return window.appData(); }, freeChars);
    const results = await page.evaluate(([id, count, keyed]) => window.sendMany(id, count, keyed), [id, count, keyed]);
    assert.equal(results.filter((r) => r.ok).length, count, summarize(results));
    const after = await page.evaluate(async () => ({
      app: window.appData(),
      intents: (await window.client.intents()).map((i) => ({ intentId: i.intentId, state: i.state })),
      fits: (() => { try { localStorage.setItem("app/probe", "p".repeat(64)); localStorage.removeItem("app/probe"); return true; } catch { return false; } })(),
    }));
    assert.deepEqual(after.app, before, "the app's own data is untouched");
    assert.ok(after.intents.some((i) => i.intentId === conflict.intentId && i.state === "conflict"),
      "the conflicted intent is never evicted");
    assert.ok(after.intents.length < count, `settled intents were evicted to make room (${after.intents.length} kept of ${count + 1})`);
    assert.ok(after.intents.filter((i) => i.state === "succeeded").length >= 1, "the newest outcome is kept");
    await appendedOnce(id, results);
    await context.close();
  });
}

for (const left of [20_000, 60_000]) {
  test(`IndexedDB at its quota (${left / 1000} KB left): 200 commands through WowClient all go out, once, and the conflict is kept`, async () => {
    const context = await env.browser.newContext();
    const id = await createAccount();
    // Chromium lets a test set an origin's quota; it holds for every write
    // when set before the origin's first (set later, it is not always enforced).
    const origin = new URL(env.gateway.base).origin;
    const blank = await context.newPage();
    const cdp = await context.newCDPSession(blank);
    await cdp.send("Storage.overrideQuotaForOrigin", { origin, quotaSize: 1_000_000 });
    const page = await openPage(context, "indexedDB");
    const conflict = await leaveAConflict(page, id);
    // The app's own database fills the quota with random (incompressible)
    // bytes; then the quota is raised by `left`.
    const appEntries = await page.evaluate(async () => {
      const db = await new Promise((resolve, reject) => {
        const open = indexedDB.open("app", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("blobs");
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      const tx = (f) => new Promise((resolve, reject) => {
        const t = db.transaction("blobs", "readwrite");
        f(t.objectStore("blobs"));
        t.oncomplete = resolve;
        t.onabort = () => reject(t.error);
      });
      let n = 0;
      for (let size = 65_536; size >= 512; size >>= 1) {
        for (;;) {
          try { await tx((s) => s.put(crypto.getRandomValues(new Uint8Array(size)), n)); n += 1; } catch { break; }
        }
      }
      window.appCount = () => new Promise((resolve) => {
        const count = db.transaction("blobs").objectStore("blobs").count();
        count.onsuccess = () => resolve(count.result);
      });
      return n;
    });
    assert.ok(appEntries > 0, "the app's data filled the quota");
    const { usage } = await cdp.send("Storage.getUsageAndQuota", { origin });
    await cdp.send("Storage.overrideQuotaForOrigin", { origin, quotaSize: usage + left });
    const count = 200;
    const results = await page.evaluate(([id, count]) => window.sendMany(id, count, false), [id, count]);
    const after = await page.evaluate(async () => ({ app: await window.appCount(),
      intents: (await window.client.intents()).map((i) => ({ intentId: i.intentId, state: i.state })) }));
    const { usage: used, quota } = await cdp.send("Storage.getUsageAndQuota", { origin });
    assert.equal(results.filter((r) => r.ok).length, count, `${summarize(results)} (usage ${used} of ${quota})`);
    assert.equal(after.app, appEntries, "the app's own data is untouched");
    assert.ok(after.intents.some((i) => i.intentId === conflict.intentId && i.state === "conflict"),
      "the conflicted intent is never evicted");
    assert.ok(after.intents.length < count, `settled intents were evicted to make room (${after.intents.length} kept of ${count + 1})`);
    await appendedOnce(id, results);
    await context.close();
  });
}
