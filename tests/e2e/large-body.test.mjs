// A large body (128 KB of JSON or more) is held as the caller's own text: the
// request sends that string and each write of its record puts it in (the
// module never copies it out again). What the gateway receives and what the
// journal keeps must be exactly what they were when the module wrote the
// text itself: in Chromium, Firefox and WebKit, on IndexedDB (the record an
// object, its body a string) and on a caller's adapter (the record's text).
import { before, after } from "node:test";
import assert from "node:assert/strict";
import { createAccount as createAccountOn, startGateway } from "../support/gateway.mjs";
import { testEachEngine } from "../support/engines.mjs";

let gateway;
before(async () => { gateway = await startGateway({ www: true, quiet: true }); });
after(async () => { await gateway?.stop(); });

const unique = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

/**
 * In a page whose `fetch` records each request's body: a client on
 * `storage` sends a small body, then a large one full of what a JSON
 * string escapes or leaves as it is; answers what was sent and stored.
 */
async function sendLarge(browser, storage) {
  const page = await browser.newPage();
  await page.goto(`${gateway.base}/pkg/index.js`);
  const account = await createAccountOn(gateway.base, "large");
  const seen = await page.evaluate(async ({ storage, account, ns }) => {
    const sent = [];
    const real = window.fetch;
    window.fetch = (url, init) => (sent.push(init?.body), real(url, init));
    const { default: init, WowClient } = await import("/pkg/index.js");
    await init();
    // A caller's own adapter: strings in, strings out, no compareAndSet.
    const map = new Map();
    const adapter = { get: async (k) => map.get(k) ?? null, set: async (k, v) => void map.set(k, v),
      delete: async (k) => void map.delete(k), list: async (p) => [...map].filter(([k]) => k.startsWith(p)) };
    const options = { user: null, baseUrl: location.origin, namespace: ns, timeoutMs: 10_000,
      storage: storage === "adapter" ? adapter : "indexedDB" };
    const client = await WowClient.connect(options);
    const lock = (body) => ({ aggregate: { resource: "account", id: account }, action: "lock_amount", body });
    const small = await client.sendAndWait(lock({ amount: 1 }));
    const tricky = `"quoted" \\back\\slash\\ é 😀 \u2028 \u2029 \n\t</script> `;
    const body = { amount: 1, price: 0.1 + 0.2, big: 2 ** 60, items: Array.from({ length: 3000 }, (_, i) => ({ i, note: `${i}: ${tricky}` })) };
    const large = await client.sendAndWait(lock(body));
    const text = JSON.stringify(body);
    // The records as the store keeps them.
    const stored = async (intentId) => {
      if (storage === "adapter") return [...map].find(([k]) => k.endsWith(intentId))[1];
      const db = await new Promise((resolve, reject) => {
        const open = indexedDB.open(`wow-command-client/${ns}`);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      const r = db.transaction(["intents"]).objectStore("intents").get(intentId);
      const value = await new Promise((resolve) => { r.onsuccess = () => resolve(r.result); });
      db.close();
      return value;
    };
    const all = await client.intents();
    const listed = all.find((r) => r.command.body.items);
    const smallId = all.find((r) => !r.command.body.items).intentId;
    const [smallStored, largeStored] = [await stored(smallId), await stored(listed.intentId)];
    client.free();
    // A client of a later page: the record read back from the store.
    const again = await WowClient.connect(options);
    const reread = (await again.intents()).find((r) => r.intentId === listed.intentId);
    again.free();
    return { text, small: small.errorCode, large: large.errorCode, sentIt: sent.filter((b) => b === text).length,
      sentKinds: sent.filter((b) => typeof b === "string" && b.length > 100_000).length,
      smallStored, largeStored, listedSame: JSON.stringify(listed.command.body) === text,
      rereadSame: JSON.stringify(reread.command.body) === text, rereadState: reread.state };
  }, { storage, account, ns: unique("large") });
  await page.close();
  return seen;
}

function sameShape(small, large, text) {
  assert.deepEqual(Object.keys(large), Object.keys(small), "the record's fields, in their order");
  assert.deepEqual(Object.keys(large.command), Object.keys(small.command), "the command's fields, in their order");
  assert.equal(typeof large.command.body, "string", "a schema-4 body: its text");
  assert.equal(large.command.body, text, "the caller's text, exactly");
  assert.equal(large.schemaVersion, small.schemaVersion);
}

const cases = {
  async "IndexedDB: sent as the caller's text, once; stored as the object a small body's record is, the text its body"(browser) {
    const s = await sendLarge(browser, "indexedDB");
    assert.deepEqual([s.small, s.large], ["Ok", "Ok"]);
    assert.equal(s.sentIt, 1, "the request's body is the caller's JSON text");
    assert.equal(s.sentKinds, 1, "sent once");
    sameShape(s.smallStored, s.largeStored, s.text);
    assert.ok(s.listedSame && s.rereadSame, "intents() hands the body back, before and after a reload");
    assert.equal(s.rereadState, "succeeded");
  },

  async "a caller's adapter: the record's text with the body written in as the module writes a JSON string"(browser) {
    const s = await sendLarge(browser, "adapter");
    assert.deepEqual([s.small, s.large], ["Ok", "Ok"]);
    assert.equal(s.sentIt, 1);
    assert.equal(typeof s.largeStored, "string");
    const [small, large] = [JSON.parse(s.smallStored), JSON.parse(s.largeStored)];
    sameShape(small, large, s.text);
    // The body's stored form, byte for byte: its text as a JSON string, followed by the next field.
    assert.ok(s.largeStored.includes(`"body":${JSON.stringify(s.text)},"create":`), "written in whole, in its place");
    assert.equal(JSON.stringify(large), s.largeStored, "the text is the record's canonical JSON text");
    assert.ok(s.listedSame && s.rereadSame);
    assert.equal(s.rereadState, "succeeded");
  },
};

testEachEngine("large body", cases, 120_000);
