// The browser the dashboard tests drive: Debian's Chromium through
// playwright-core (no browser download); CAIRNQ_CHROMIUM names another
// executable. Outside CI a missing browser skips with the reason; in CI it
// fails.
import fs from "node:fs";
import { after, before } from "node:test";

import { defer } from "./helpers.mjs";

export const CHROMIUM =
  process.env.CAIRNQ_CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => fs.existsSync(p));
export const SKIP =
  CHROMIUM || process.env.CI ? false : "no Chromium (apt-get install chromium, or set CAIRNQ_CHROMIUM)";

/**
 * Launch Chromium before the suite's tests and close it after them; call in a
 * `describe` body (or at a file's top level). Returns a getter of the browser.
 * @param {string[]} [args] more command-line switches
 */
export function useChromium(args = []) {
  let browser;
  before(async () => {
    if (SKIP) return;
    if (!CHROMIUM) throw new Error("CI is set but no Chromium was found: .ci/run installs Debian's chromium package");
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-dev-shm-usage", ...args],
    });
  });
  after(async () => {
    await browser?.close();
  });
  return () => browser;
}

/**
 * A page in a browser context of its own, closed when the test ends, and the
 * messages of the script errors it has thrown so far.
 * @param {import("node:test").TestContext} t
 * @param {import("playwright-core").Browser} browser
 */
export async function pageOf(t, browser) {
  const context = await browser.newContext();
  defer(t, () => context.close());
  const page = await context.newPage();
  /** @type {string[]} */
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  return { page, errors };
}
