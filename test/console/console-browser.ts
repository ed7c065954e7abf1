import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { chromium, type Browser, type Page } from "playwright-core";
import { expect } from "vitest";

/** Debian's Chromium (installed by .ci/run); never a downloaded browser. */
const CHROMIUM = "/usr/bin/chromium";

export interface ConsoleBrowser {
  browser: Browser;
  page: Page;
  /** Messages of every alert/confirm/prompt the page opened (none is expected). */
  dialogs: string[];
}

/**
 * Chromium at 1280×800 with clipboard access to `origin`, recording CSP violations in the
 * page (an init script is not subject to the policy) and any dialog a payload would open.
 */
export async function launchConsoleBrowser(origin: string): Promise<ConsoleBrowser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
  await context.addInitScript(() => {
    const seen: string[] = ((window as unknown as { __csp: string[] }).__csp = []);
    document.addEventListener("securitypolicyviolation", (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  const page = await context.newPage();
  const dialogs: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return { browser, page, dialogs };
}

/** Nothing the page shows ran as markup: no dialog, no flag, no element made from a payload. */
export async function expectNoInjection(page: Page, dialogs: string[]): Promise<void> {
  expect(dialogs).toEqual([]);
  expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
}

/** axe-core's serious and critical violations on the page as it is now ("rule (count: elements)"). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axeSource);
  const results = await page.evaluate(() =>
    (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }).axe.run(),
  );
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.nodes.length}: ${v.nodes.map((node) => node.target.join(" ")).join(", ")})`);
}

/** The CSP violations the page recorded since it loaded. */
export function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
}

/**
 * At a phone's width (390 px), whether the page scrolls sideways; when it does, the elements
 * that reach past the edge (innermost first), to say what to mend.
 */
export async function phoneOverflow(page: Page): Promise<string[]> {
  await page.setViewportSize({ width: 390, height: 844 });
  return page.evaluate(() => {
    if (document.documentElement.scrollWidth <= 390) return [];
    return [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > 390 && !el.closest(".scroll"))
      .reverse()
      .slice(0, 5)
      .map(
        (el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${[...el.classList].join(".")} right=${Math.round(el.getBoundingClientRect().right)}`,
      );
  });
}

/** Where a few screenshots of each run are kept for people to look at. */
const LEAD_SHOTS = "/work/console-shots";

/**
 * Copies the screenshots in `dir` whose names match `names` to where the lead reads them,
 * first removing an earlier run's shot of the same step name ("07-chat.png" replaces "05-chat.png").
 */
export function keepShots(dir: string, names: RegExp): void {
  mkdirSync(LEAD_SHOTS, { recursive: true });
  const step = (file: string) => file.replace(/^\d+-/, "");
  const kept = readdirSync(dir).filter((file) => names.test(file));
  const replaced = new Set(kept.map(step));
  for (const old of readdirSync(LEAD_SHOTS)) if (replaced.has(step(old))) rmSync(join(LEAD_SHOTS, old));
  for (const file of kept) copyFileSync(join(dir, file), join(LEAD_SHOTS, file));
}
