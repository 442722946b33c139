// The promise that spans versions, pinned: every golden fixture under
// tests/fixtures/golden/ (written by an earlier build, scripts/golden-fixtures.mjs)
// is read by this build in Chromium, Firefox and WebKit (IndexedDB,
// localStorage, a caller's adapter) and in Node (an adapter), through the
// package as an app uses it, against a fresh test gateway each time. It must
// derive the same requestIds and fingerprints, list every record as stored,
// replay the settled keyed intents without sending, refuse a changed payload,
// send again what was refused before the command bus, resume the unsettled
// ones (confirming first), skip a done effect, move damaged entries aside and
// leave a newer build's record alone. And no fixture may change: they only grow.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engines, launch, ready } from "../support/engines.mjs";
import { root, startGateway } from "../support/gateway.mjs";
import { kinds } from "./stores.mjs";

const golden = join(root, "tests/fixtures/golden");
const versions = readdirSync(golden).filter((d) => /^v\d+$/.test(d)).sort((a, b) => a.slice(1) - b.slice(1));
const read = (v, file) => JSON.parse(readFileSync(join(golden, v, file), "utf8"));

test("the golden fixtures are the bytes they were written as, and only grow", () => {
  assert.ok(versions.length > 0, "there are fixtures");
  const manifest = readFileSync(join(golden, "MANIFEST"), "utf8").trim().split("\n").map((l) => l.split(/\s+/));
  const pinned = new Map(manifest.map(([hash, file]) => [file, hash]));
  for (const v of versions) {
    for (const f of readdirSync(join(golden, v))) {
      const file = `${v}/${f}`;
      assert.ok(pinned.has(file), `${file} is not in tests/fixtures/golden/MANIFEST: fixtures are added by scripts/golden-fixtures.mjs`);
      const hash = createHash("sha256").update(readFileSync(join(golden, file))).digest("hex");
      assert.equal(hash, pinned.get(file), `${file} changed: a fixture is what an earlier build stored and is never edited; ` +
        "a new stored format gets a new schema version and new fixtures (scripts/golden-fixtures.mjs)");
    }
  }
  for (const file of pinned.keys()) assert.ok(existsSync(join(golden, file)), `${file} is gone: fixtures are never removed`);
  // Where the history is at hand: no commit ever changed or removed a fixture or a manifest line.
  const git = (...args) => execFileSync("git", args, { cwd: root, encoding: "utf8" });
  let shallow = "true";
  try { shallow = git("rev-parse", "--is-shallow-repository").trim(); } catch { /* not a checkout */ }
  if (shallow !== "false") return;
  const changed = git("log", "--format=%h", "--diff-filter=MDR", "--name-only", "--", "tests/fixtures/golden/v*").trim();
  assert.equal(changed, "", `commits changed or removed a golden fixture:\n${changed}`);
  const dropped = git("log", "--format=", "-p", "--", "tests/fixtures/golden/MANIFEST").split("\n").filter((l) => /^-[0-9a-f]/.test(l));
  assert.deepEqual(dropped, [], "commits took lines out of the golden MANIFEST");
});

/** The records of a dump that are readable intents (not the damaged entries), parsed, by id. */
function storedIntents(fixture) {
  const damaged = new Set(fixture.damaged.map((d) => d.id));
  const { store } = fixture;
  const own = `wow-intents/${store.namespace}/`;
  const entries = store.kind === "indexedDB"
    ? store.stores.intents
    : store.entries.filter(([key]) => key.startsWith(own)).map(([key, text]) => [key.slice(own.length), text]);
  return new Map(entries.filter(([id]) => !damaged.has(id))
    .map(([id, value]) => [id, asListed(typeof value === "string" ? JSON.parse(value) : value)]));
}

/** A stored record as `intents()` gives it: from schema 3 on, the body is stored as its JSON text. */
function asListed(record) {
  if (!(record.schemaVersion >= 3)) return record;
  return { ...record, command: { ...record.command, body: JSON.parse(record.command.body) } };
}

const byId = (a, b) => (a.intentId < b.intentId ? -1 : 1);

/** Judges what the build under test saw of one store fixture (check.mjs's readStore). */
async function judge(where, fixture, seen, gateway) {
  const stored = storedIntents(fixture);
  const at = (c) => `${where} case "${c.name}"`;
  assert.deepEqual(seen.listed.slice().sort(byId), [...stored.values()].sort(byId),
    `${where}: intents() lists every record exactly as it was stored`);

  // Damaged entries (moved aside) and a newer build's record (left in place) alike.
  const unreadable = fixture.damaged.filter((d) => d.area === "intents").map((d) => d.id).sort();
  const reported = (keys) => keys.map((k) => k.slice(k.lastIndexOf("/") + 1)).sort();
  assert.deepEqual(reported(seen.quarantined), unreadable, `${where}: quarantined() names each intent entry it cannot read`);
  assert.deepEqual(reported(seen.quarantinedAfter), unreadable, `${where}: and still does at the end`);
  for (const d of fixture.damaged) {
    const { afterListing, atEnd } = seen.damaged[d.name];
    if (d.expect === "untouched") {
      const original = fixture.store.kind === "indexedDB"
        ? fixture.store.stores[d.store].find(([k]) => k === d.id)[1]
        : fixture.store.entries.find(([k]) => k === d.key)[1];
      assert.deepEqual(atEnd, original, `${where} damaged "${d.name}": a newer build's record is left exactly as it was`);
    } else if (d.expect === "quarantined") {
      assert.equal(d.area === "intents" ? afterListing : atEnd, null, `${where} damaged "${d.name}": moved out of the records`);
    }
  }

  for (const c of fixture.cases.filter((c) => c.expect === "replayed")) {
    const { again, changed } = seen.replays[c.name];
    const record = stored.get(c.intentId);
    assert.deepEqual(again, { status: c.state, intentId: c.intentId, requestId: record.requestId,
      attempts: record.attempts.length, appended: again.appended, code: again.code },
    `${at(c)}: the same key and payload replay the stored ${c.state} outcome, with nothing sent`);
    assert.equal(again.appended, record.appended ?? null, `${at(c)}: appended as stored`);
    assert.deepEqual(changed, { error: "IntentKeyReused" }, `${at(c)}: a changed payload under the key is refused`);
  }
  for (const c of fixture.cases.filter((c) => c.expect === "sent-again")) {
    const o = seen.sentAgain[c.name];
    const record = stored.get(c.intentId);
    assert.equal(o.status, "succeeded", `${at(c)}: refused before the command bus, so sent again: ${JSON.stringify(o)}`);
    assert.equal(o.requestId, record.requestId, `${at(c)}: with the same requestId`);
    assert.equal(o.attempts, record.attempts.length + 1, `${at(c)}: one attempt more`);
  }
  for (const c of fixture.cases.filter((c) => c.expect === "resumed" || c.expect === "confirmed")) {
    const record = stored.get(c.intentId);
    const o = seen.resumed.driven.find((d) => d.intentId === c.intentId);
    assert.ok(o, `${at(c)}: resume() drove the ${c.state} intent: ${JSON.stringify(seen.resumed)}`);
    const status = c.outcome ?? "succeeded";
    assert.equal(o.status, status, `${at(c)}: ${JSON.stringify(o)}`);
    assert.equal(o.requestId, record.requestId, `${at(c)}: with the requestId it was stored with`);
    if (c.expect === "confirmed") {
      assert.equal(o.attempts, record.attempts.length, `${at(c)}: confirmed from history, never sent again`);
    }
    assert.equal(seen.after.find((r) => r.intentId === c.intentId)?.state, status, `${at(c)}: its record says so`);
  }
  await gateway.idle();
  for (const c of fixture.cases.filter((c) => ["resumed", "confirmed", "sent-again"].includes(c.expect))) {
    const record = stored.get(c.intentId);
    const once = (c.outcome ?? "succeeded") === "succeeded" ? 1 : 0;
    assert.equal(await gateway.stored(record.aggregate.resource, record.aggregate.aggregateId, record.requestId), once,
      `${at(c)}: appended ${once ? "exactly once" : "never"}`);
  }

  for (const e of fixture.effects) {
    const want = { skipped: { status: "skipped", result: e.result, ran: 0 },
      reconciled: { status: "reconciled", result: "reconciled by the check", ran: 0 },
      "run-again": { status: "ran", result: "ran again", ran: 1 } }[e.expect];
    assert.deepEqual(seen.effects[e.name], want, `${where} effect "${e.name}": ${e.expect}`);
  }
  assert.deepEqual(seen.effectRecords, fixture.effects.map((e) => e.identity).sort(), `${where}: the consumer lists its records`);
}

/** Judges the derived requestIds and fingerprints (check.mjs's deriveIds and fingerprints). */
function judgeDerived(where, v, ids, prints) {
  read(v, "request-ids.json").forEach((pinned, i) => {
    assert.deepEqual(ids[i], { requestId: pinned.requestId, aggregateId: pinned.aggregateId },
      `${where} ${v}/request-ids.json #${i} (namespace ${JSON.stringify(pinned.namespace)}, key ${JSON.stringify(pinned.intentKey.slice(0, 40))}): ` +
      "a keyed intent's requestId is derived as every earlier build derived it");
  });
  read(v, "fingerprints.json").cases.forEach((pinned, i) => {
    assert.deepEqual(prints[i], { fingerprint: pinned.fingerprint },
      `${where} ${v}/fingerprints.json case "${pinned.name}": the payload fingerprint is what earlier builds stored`);
  });
}

/** A folder served at the gateway's root: the check's modules. */
function www() {
  const dir = mkdtempSync(join(tmpdir(), "wow-golden-check-"));
  cpSync(join(root, "tests/golden"), dir, { recursive: true });
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>golden check</title>");
  return dir;
}

/** In a page: the package and the check, then `call(check, pkg, arg)`. */
const inPage = (page, name, arg) => page.evaluate(async ([name, arg]) => {
  const client = await import("/pkg/index.js");
  await client.default();
  const consumer = await import("/pkg/consumer-web.js");
  await consumer.default();
  const check = await import("/check.mjs");
  const pkg = { WowClient: client.WowClient, IdempotentConsumer: consumer.IdempotentConsumer };
  return name === "readStore" ? check.readStore(pkg, arg, location.origin) : check[name](pkg, arg);
}, [name, arg]);

for (const engine of engines) {
  test(`${engine}: this build reads what earlier builds stored`, { timeout: 600_000 }, async (t) => {
    if (!ready(t, engine)) return;
    const served = www();
    const browser = await launch(engine);
    try {
      for (const v of versions) {
        const gateway = await startGateway({ www: served, quiet: true });
        try {
          // A page of its own (its own storage) per fixture.
          const page = async () => {
            const p = await browser.newPage();
            await p.goto(`${gateway.base}/index.html`);
            return p;
          };
          await t.test(`${v}: derived requestIds and fingerprints`, async () => {
            const p = await page();
            const ids = await inPage(p, "deriveIds", read(v, "request-ids.json"));
            const prints = await inPage(p, "fingerprints", read(v, "fingerprints.json"));
            await p.close();
            judgeDerived(engine, v, ids, prints);
          });
          for (const [kind, file] of Object.entries(kinds)) {
            await t.test(`${v}/${file}.json: ${kind}`, async () => {
              const fixture = read(v, `${file}.json`);
              const p = await page();
              const seen = await inPage(p, "readStore", fixture);
              await p.close();
              await judge(`${engine} ${v}/${file}.json`, fixture, seen, gateway);
            });
          }
        } finally {
          await gateway.stop();
        }
      }
    } finally {
      await browser.close();
    }
  });
}

test("node: this build reads what earlier builds stored in a caller's adapter", async (t) => {
  const client = await import(join(root, "pkg/node.js"));
  const consumer = await import(join(root, "pkg/consumer-node.js"));
  const check = await import("./check.mjs");
  const pkg = { WowClient: client.WowClient, IdempotentConsumer: consumer.IdempotentConsumer };
  for (const v of versions) {
    const gateway = await startGateway({ quiet: true });
    try {
      await t.test(`${v}: derived requestIds and fingerprints`, async () => {
        judgeDerived("node", v, await check.deriveIds(pkg, read(v, "request-ids.json")),
          await check.fingerprints(pkg, read(v, "fingerprints.json")));
      });
      await t.test(`${v}/adapter.json`, async () => {
        const fixture = read(v, "adapter.json");
        await judge(`node ${v}/adapter.json`, fixture, await check.readStore(pkg, fixture, gateway.base), gateway);
      });
    } finally {
      await gateway.stop();
    }
  }
});
