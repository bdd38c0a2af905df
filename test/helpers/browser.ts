import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { onPostgres } from './db.js';

const CHROMIUM = '/usr/bin/chromium';

/** The panel's browser tests run on Postgres; in CI the browser must be there (.ci/run installs it). */
export const browserRunnable = onPostgres && (existsSync(CHROMIUM) || process.env.CI === 'true');

/** Debian's Chromium, headless, with nothing reaching out of the machine. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/** `TEKIL_SCREENSHOTS=1` writes the run's screenshots into docs/img/ for docs/dashboard.md. */
const screenshotDir =
  process.env.TEKIL_SCREENSHOTS === '1' || process.env.TEKIL_UPDATE_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../docs/img/', import.meta.url)) : undefined;

export async function screenshot(page: Page, name: string): Promise<void> {
  if (screenshotDir) await page.screenshot({ path: join(screenshotDir, `dashboard-${name}.png`), fullPage: true });
}
