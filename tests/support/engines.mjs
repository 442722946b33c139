// The three browser engines behind one small interface, for tests that must
// hold in each: Chromium (Debian's, through playwright-core), Firefox (Debian's
// firefox-esr, through puppeteer-core over WebDriver BiDi) and WebKit
// (WebKitGTK's MiniBrowser, through WebKitWebDriver and selenium-webdriver,
// on an Xvfb display). A browser offers `newContext()` (pages that share
// storage, Web Locks and BroadcastChannel, like tabs of one profile),
// `newPage()` (a page in a context of its own) and `close()`; a page
// `goto(url)`, `reload()`, `evaluate(fn, arg)` (an async function run in the
// page, its JSON result returned), `waitFor(fn, arg, timeoutMs)` and
// `close()`. A context's `setOffline(offline)` takes its pages off the
// network as the browser itself would (`navigator.onLine` false, fetch
// failing at once), where the engine's driver can: it is null where not
// (WebKitWebDriver has no such command).
// `ready(t, engine)` starts a test in an engine: where the engine is missing
// the test is reported skipped, naming what is missing, and under CI=true it
// fails instead.
import { spawn } from "node:child_process";
import { test } from "node:test";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromiumPath, launchChromium } from "./browser.mjs";

/** The engines a test runs in: all three, or those TEST_ENGINES names (comma-separated). */
export const engines = process.env.TEST_ENGINES ? process.env.TEST_ENGINES.split(",") : ["chromium", "firefox", "webkit"];

/** The first `name` on PATH, or null. */
export function onPath(name) {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

const firefoxPath = process.env.FIREFOX || onPath("firefox-esr");
const miniBrowserPath = process.env.MINIBROWSER || "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

/**
 * What `engine` lacks here (scripts/bootstrap.sh installs all three), named
 * for a person to fix; null when it can run.
 */
export function missing(engine) {
  const lacking = {
    chromium: [[chromiumPath, "Chromium (/usr/bin/chromium or CHROMIUM)"]],
    firefox: [[firefoxPath, "Firefox (firefox-esr on PATH, or FIREFOX)"]],
    webkit: [[miniBrowserPath, `WebKitGTK's MiniBrowser (${miniBrowserPath}, or MINIBROWSER)`],
      [onPath("WebKitWebDriver"), "WebKitWebDriver on PATH"], [onPath("Xvfb"), "Xvfb on PATH"]],
  }[engine];
  if (!lacking) return `no engine named ${engine}`;
  const gone = lacking.filter(([path]) => !path || !existsSync(path)).map(([, what]) => what);
  return gone.length ? `${engine} cannot run here: ${gone.join(", ")} missing (scripts/bootstrap.sh installs it)` : null;
}

/**
 * Whether test `t` can run in `engine`. Where it cannot, the test is
 * reported skipped, naming what is missing; under CI=true that is a failure
 * instead: a run is never green by leaving an engine out.
 */
export function ready(t, engine) {
  const why = missing(engine);
  if (!why) return true;
  if (process.env.CI) throw new Error(why);
  t.skip(why);
  return false;
}

/**
 * One test per engine, named `${engine}: ${title}`, that runs each of
 * `cases` (name → `run(browser)`) as a subtest in one launched browser.
 */
export function testEachEngine(title, cases, timeout) {
  for (const engine of engines) {
    test(`${engine}: ${title}`, { timeout }, async (t) => {
      if (!ready(t, engine)) return;
      const browser = await launch(engine);
      try {
        for (const [name, run] of Object.entries(cases)) await t.test(name, () => run(browser));
      } finally {
        await browser.close();
      }
    });
  }
}

/** Launches `engine`; resolves to `{ engine, newPage(), close() }`. */
export async function launch(engine) {
  const why = missing(engine);
  if (why) throw new Error(why);
  if (engine === "chromium") return chromium();
  if (engine === "firefox") return firefox();
  if (engine === "webkit") return webkit();
  throw new Error(`unknown engine ${engine}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `check()` until it is truthy or `timeoutMs` passes; the last value either way. */
async function poll(check, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value || Date.now() > until) return value;
    await sleep(100);
  }
}

/** `newPage()` as a page in a context of its own. */
const withOwnContexts = (browser) => ({
  ...browser,
  async newPage() {
    const context = await browser.newContext();
    const page = await context.newPage();
    return { ...page, close: () => context.close() };
  },
});

/**
 * The interface over a browser context of playwright-core (Chromium) or
 * puppeteer-core (Firefox): both name these calls alike.
 */
const driven = (context) => {
  const pages = new Set();
  return {
    async newPage() {
      const page = await context.newPage();
      pages.add(page);
      return {
        goto: (url) => page.goto(url),
        reload: () => page.reload(),
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        waitFor: (fn, arg, timeoutMs) => poll(() => page.evaluate(fn, arg), timeoutMs),
        close: () => { pages.delete(page); return page.close(); },
      };
    },
    // playwright-core offline-emulates a whole context; puppeteer-core a page
    // (over WebDriver BiDi, emulation.setNetworkConditions).
    setOffline: context.setOffline ? (offline) => context.setOffline(offline)
      : (offline) => Promise.all([...pages].map((p) => p.setOfflineMode(offline))),
    close: () => context.close(),
  };
};

async function chromium() {
  const browser = await launchChromium();
  return withOwnContexts({
    engine: "chromium",
    newContext: async () => driven(await browser.newContext()),
    close: () => browser.close(),
  });
}

async function firefox() {
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.launch({
    browser: "firefox", executablePath: firefoxPath, headless: true,
    userDataDir: mkdtempSync(join(tmpdir(), "wow-firefox-")),
    // No calls home on a closed network; nothing else is changed, so a
    // permission prompt stays a prompt, unanswered.
    extraPrefsFirefox: { "app.update.enabled": false, "browser.shell.checkDefaultBrowser": false,
      "datareporting.policy.dataSubmissionEnabled": false, "toolkit.telemetry.enabled": false,
      "network.captive-portal-service.enabled": false, "browser.safebrowsing.update.enabled": false },
  });
  return withOwnContexts({
    engine: "firefox",
    newContext: async () => driven(await browser.createBrowserContext()),
    close: () => browser.close(),
  });
}

/** A free TCP port on loopback. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => { const { port } = server.address(); server.close(() => resolve(port)); });
    server.once("error", reject);
  });
}

/**
 * An Xvfb on a display it picked itself (`-displayfd`: the first number
 * with no lock file, said back once it listens). A display number picked
 * here at random met the lock files of earlier Xvfbs killed without a
 * chance to remove them: when the pid in one had been reused by a live
 * process, that Xvfb refused the display and exited, and MiniBrowser never
 * started (a run waiting forever, under a parallel build's pid churn).
 */
function xvfb() {
  const server = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
    { stdio: ["ignore", "ignore", "pipe", "pipe"] });
  let said = "", err = "";
  server.stderr.on("data", (d) => { err += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { server.kill("SIGTERM"); reject(new Error("Xvfb served no display within 10 s")); }, 10_000);
    server.stdio[3].on("data", (d) => {
      said += d;
      if (!said.includes("\n")) return;
      clearTimeout(timer);
      resolve({ server, display: `:${said.trim()}` });
    });
    server.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Xvfb exited (${code}) before it served a display: ${err.trim().slice(-300)}`));
    });
  });
}

/** `promise`, or an error saying `what` did not happen within `ms`. */
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function webkit() {
  const { Builder } = await import("selenium-webdriver");
  const children = [];
  let display = process.env.DISPLAY;
  let x = null;
  if (!display) {
    ({ server: x, display } = await xvfb());
  }
  const port = await freePort();
  children.push(spawn("WebKitWebDriver", [`--port=${port}`, "--host=127.0.0.1"],
    { stdio: "ignore", env: { ...process.env, DISPLAY: display } }));
  const server = `http://127.0.0.1:${port}`;
  await poll(async () => { try { return (await fetch(`${server}/status`)).ok; } catch { return false; } }, 10_000);
  const drivers = new Set();
  // Xvfb is asked to stop (SIGTERM): it then removes its lock file.
  const stop = () => { for (const c of children) c.kill("SIGKILL"); x?.kill("SIGTERM"); };
  return withOwnContexts({
    engine: "webkit",
    // A context is one MiniBrowser (WebKitWebDriver drives one per
    // session); its pages are its windows, each command run in its window
    // in turn, so a page's wait goes in the page itself (start it, then
    // poll), never in a script that blocks the session.
    async newContext() {
      const driver = await within(new Builder().usingServer(server).withCapabilities({
        browserName: "MiniBrowser",
        "webkitgtk:browserOptions": { binary: miniBrowserPath, args: ["--automation"] },
      }).build(), 60_000, `WebKitWebDriver did not start MiniBrowser on display ${display}`);
      drivers.add(driver);
      await driver.manage().setTimeouts({ script: 15 * 60_000, pageLoad: 60_000 });
      let turn = Promise.resolve();
      const inWindow = (handle, f) => {
        const run = turn.then(async () => { await driver.switchTo().window(handle); return f(); });
        turn = run.catch(() => {});
        return run;
      };
      let first = true;
      return {
        async newPage() {
          const handle = first ? await driver.getWindowHandle()
            : await inWindow(await driver.getWindowHandle(), async () => {
              await driver.switchTo().newWindow("tab");
              return driver.getWindowHandle();
            });
          first = false;
          const evaluate = async (fn, arg) => {
            const r = await inWindow(handle, () => driver.executeAsyncScript(`const done = arguments[arguments.length - 1];
              Promise.resolve().then(() => (${fn})(arguments[0]))
                .then((value) => done({ value: value === undefined ? null : value }), (e) => done({ error: String(e && e.stack || e) }));`, arg ?? null));
            if (r && "error" in r) throw new Error(r.error);
            return r?.value;
          };
          return {
            goto: (url) => inWindow(handle, () => driver.get(url)),
            reload: () => inWindow(handle, () => driver.navigate().refresh()),
            evaluate,
            waitFor: (fn, arg, timeoutMs) => poll(() => evaluate(fn, arg).catch(() => null), timeoutMs),
            close: () => inWindow(handle, () => driver.close()).catch(() => {}),
          };
        },
        setOffline: null,
        async close() {
          drivers.delete(driver);
          await driver.quit().catch(() => {});
        },
      };
    },
    async close() {
      await Promise.all([...drivers].map((d) => d.quit().catch(() => {})));
      stop();
    },
  });
}

/**
 * Opens the demo at `url` (in `context`) until its Service Worker is active,
 * then sends a lock on account `id` from it and answers once the intent is
 * `sending` (the gateway holds it: a delay the test set), with its ids and
 * the page, which the test closes to leave the intent mid-flight.
 */
export async function demoSendingTo(context, url, id) {
  const page = await context.newPage();
  await page.goto(url);
  const active = await page.waitFor(async () => document.body.dataset.ready === "true"
    && !!(await navigator.serviceWorker.getRegistration())?.active, null, 20_000);
  if (!active) throw new Error("the demo did not register its Service Worker");
  const sent = await page.evaluate(async (id) => {
    const c = window.demo.client;
    void c.send({ aggregate: { resource: "account", id }, action: "lock_amount", body: { amount: 1 } }).catch(() => {});
    for (;;) {
      const [r] = await c.intents();
      if (r && r.state === "sending") return { intentId: r.intentId, requestId: r.requestId };
      await new Promise((r) => setTimeout(r, 20));
    }
  }, id);
  return { page, sent };
}
