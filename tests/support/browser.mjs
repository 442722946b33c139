// Debian's Chromium, headless, with the flags this project's tests need
// (no background network calls, which a closed network refuses noisily).
import { chromium } from "playwright-core";

export const chromiumArgs = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
  "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
  "--disable-quic"];

export const chromiumPath = process.env.CHROMIUM || "/usr/bin/chromium";

export function launchChromium() {
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
}
