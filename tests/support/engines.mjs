// The three browser engines behind one small interface, for tests that must
// hold in each: Chromium (Debian's, through playwright-core), Firefox (Debian's
// firefox-esr, through puppeteer-core over WebDriver BiDi) and WebKit
// (WebKitGTK's MiniBrowser, through WebKitWebDriver and selenium-webdriver,
// on an Xvfb display). Each page offers `goto(url)`, `evaluate(fn, arg)` (an
// async function run in the page, its JSON result returned) and
// `waitFor(fn, arg, timeoutMs)`; each browser `newPage()` and `close()`.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "./browser.mjs";

export const engines = ["chromium", "firefox", "webkit"];

const firefoxPath = process.env.FIREFOX || "/usr/bin/firefox-esr";
const miniBrowserPath = process.env.MINIBROWSER || "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";

/** Whether `engine` is installed here (scripts/bootstrap.sh installs all three). */
export function available(engine) {
  if (engine === "firefox") return existsSync(firefoxPath);
  if (engine === "webkit") return existsSync(miniBrowserPath) && existsSync("/usr/bin/WebKitWebDriver") && existsSync("/usr/bin/Xvfb");
  return true;
}

/** Launches `engine`; resolves to `{ engine, newPage(), close() }`. */
export async function launch(engine) {
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

async function chromium() {
  const browser = await launchChromium();
  return {
    engine: "chromium",
    async newPage() {
      const page = await (await browser.newContext()).newPage();
      return {
        goto: (url) => page.goto(url),
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        waitFor: (fn, arg, timeoutMs) => poll(() => page.evaluate(fn, arg), timeoutMs),
        close: () => page.context().close(),
      };
    },
    close: () => browser.close(),
  };
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
  return {
    engine: "firefox",
    async newPage() {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      return {
        goto: (url) => page.goto(url),
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        waitFor: (fn, arg, timeoutMs) => poll(() => page.evaluate(fn, arg), timeoutMs),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}

/** A free TCP port on loopback. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => { const { port } = server.address(); server.close(() => resolve(port)); });
    server.once("error", reject);
  });
}

async function webkit() {
  const { Builder } = await import("selenium-webdriver");
  const children = [];
  let display = process.env.DISPLAY;
  if (!display) {
    display = `:${90 + Math.floor(Math.random() * 400)}`;
    children.push(spawn("Xvfb", [display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"], { stdio: "ignore" }));
    await sleep(300);
  }
  const port = await freePort();
  children.push(spawn("WebKitWebDriver", [`--port=${port}`, "--host=127.0.0.1"],
    { stdio: "ignore", env: { ...process.env, DISPLAY: display } }));
  const server = `http://127.0.0.1:${port}`;
  await poll(async () => { try { return (await fetch(`${server}/status`)).ok; } catch { return false; } }, 10_000);
  const drivers = [];
  const stop = () => { for (const c of children) c.kill("SIGKILL"); };
  return {
    engine: "webkit",
    async newPage() {
      // One MiniBrowser per page: WebKitWebDriver drives one session each.
      const driver = await new Builder().usingServer(server).withCapabilities({
        browserName: "MiniBrowser",
        "webkitgtk:browserOptions": { binary: miniBrowserPath, args: ["--automation"] },
      }).build();
      drivers.push(driver);
      await driver.manage().setTimeouts({ script: 60_000 });
      const evaluate = async (fn, arg) => {
        const r = await driver.executeAsyncScript(`const done = arguments[arguments.length - 1];
          Promise.resolve().then(() => (${fn})(arguments[0]))
            .then((value) => done({ value: value === undefined ? null : value }), (e) => done({ error: String(e && e.stack || e) }));`, arg ?? null);
        if (r && "error" in r) throw new Error(r.error);
        return r?.value;
      };
      return {
        goto: (url) => driver.get(url),
        evaluate,
        waitFor: (fn, arg, timeoutMs) => poll(() => evaluate(fn, arg).catch(() => null), timeoutMs),
        close: async () => { await driver.quit().catch(() => {}); drivers.splice(drivers.indexOf(driver), 1); },
      };
    },
    async close() {
      await Promise.all(drivers.map((d) => d.quit().catch(() => {})));
      stop();
    },
  };
}
