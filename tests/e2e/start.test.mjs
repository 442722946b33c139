// `npm start` prints the demo's address only once the page is served: the
// first request to the printed address already succeeds.
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

test("npm start prints the address when the page answers, and the page loads the generated commands", async () => {
  const port = await freePort();
  const db = join(mkdtempSync(join(tmpdir(), "wow-start-")), "events.sqlite");
  const child = spawn("npm", ["start", "--silent"], {
    cwd: root, detached: true, stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GATEWAY_LISTEN: `127.0.0.1:${port}`, GATEWAY_DB: db, GATEWAY_PROFILE: "debug",
      // pkg/ is built by now; rebuilding it here would pull it from under the other suites.
      START_SKIP_BUILD: "1" },
  });
  let err = "";
  child.stderr.on("data", (d) => { err += d; });
  try {
    const address = await new Promise((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = /Demo: (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once("exit", (code) => reject(new Error(`npm start exited ${code}: ${err}`)));
    });
    assert.equal(address, `http://127.0.0.1:${port}/`);
    const [page, app, generated] = await Promise.all(
      ["", "app.js", "generated/transfer/account.js"].map((p) => fetch(address + p)));
    assert.equal(page.status, 200);
    assert.match(await app.text(), /from "\/generated\/transfer\/account\.js"/);
    assert.match(await generated.text(), /export function createAccount/);
  } finally {
    process.kill(-child.pid, "SIGTERM");
  }
});
