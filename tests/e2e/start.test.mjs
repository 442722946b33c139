// `npm start` prints the demo's address only once the page is served: the
// first request to the printed address already succeeds. A taken port is
// said at once: the one a user named is an error naming it, the default
// 8080 (where `npm run gateway` also listens) gives way to a free port.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { root } from "../support/gateway.mjs";

const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

/**
 * Runs `npm start` with `env` on top of the test's own: resolves with the
 * printed address and the child, or rejects with what it wrote when it exits
 * first.
 */
function start(env) {
  const db = join(mkdtempSync(join(tmpdir(), "wow-start-")), "events.sqlite");
  const child = spawn("npm", ["start", "--silent"], {
    cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GATEWAY_DB: db, GATEWAY_PROFILE: "debug",
      // pkg/ is built by now; rebuilding it here would pull it from under the other suites.
      START_SKIP_BUILD: "1", ...env },
  });
  let err = "";
  child.stderr.on("data", (d) => { err += d; });
  const served = new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /Demo: (http:\/\/\S+)/.exec(out);
      if (m) resolve({ address: m[1], stderr: () => err });
    });
    child.once("exit", (code) => reject(Object.assign(new Error(`npm start exited ${code}: ${err}`), { code, stderr: err })));
  });
  return { served, stop: () => { try { process.kill(-child.pid, "SIGTERM"); } catch {} } };
}

/** Holds 127.0.0.1:`port` until the returned function is called. */
const hold = (port) => new Promise((resolve, reject) => {
  const s = createServer().once("error", reject).listen(port, "127.0.0.1", () => resolve(() => s.close()));
});

test("npm start prints the address when the page answers, and the page loads the generated commands", async () => {
  const port = await freePort();
  const demo = start({ GATEWAY_LISTEN: `127.0.0.1:${port}` });
  try {
    const { address } = await demo.served;
    assert.equal(address, `http://127.0.0.1:${port}/`);
    const [page, app, generated] = await Promise.all(
      ["", "app.js", "generated/transfer/account.js"].map((p) => fetch(address + p)));
    assert.equal(page.status, 200);
    assert.match(await app.text(), /from "\/generated\/transfer\/account\.js"/);
    assert.match(await generated.text(), /export function createAccount/);
  } finally {
    demo.stop();
  }
});

test("a taken port a user named ends npm start at once, naming the port and how to pick another", async () => {
  const port = await freePort();
  const release = await hold(port);
  const demo = start({ GATEWAY_LISTEN: `127.0.0.1:${port}` });
  try {
    const failed = await demo.served.then((s) => assert.fail(`served at ${s.address}`), (e) => e);
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, new RegExp(`the demo cannot be served at 127\\.0\\.0\\.1:${port}: cannot listen on 127\\.0\\.0\\.1:${port}: .*[Aa]ddress (already )?in use`));
    assert.match(failed.stderr, /GATEWAY_LISTEN=127\.0\.0\.1:8081 npm start/);
    // Said by the gateway's exit, not by the page's 60 s wait running out.
    assert.doesNotMatch(failed.stderr, /was not served/);
  } finally {
    demo.stop();
    release();
  }
});

test("with the default 8080 taken (say by npm run gateway), npm start serves the demo on a free port and says so", async () => {
  // 8080 held by this test, or already held by something else: taken either way.
  const release = await hold(8080).catch((e) => {
    if (e.code === "EADDRINUSE") return () => {};
    throw e;
  });
  const demo = start({ GATEWAY_LISTEN: "" });
  try {
    const { address, stderr } = await demo.served;
    assert.match(address, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.notEqual(address, "http://127.0.0.1:8080/");
    assert.match(stderr(), /127\.0\.0\.1:8080 is taken \(cannot listen on 127\.0\.0\.1:8080: .*\); serving on a free port instead/);
    assert.equal((await fetch(address)).status, 200);
  } finally {
    demo.stop();
    release();
  }
});
