// The Chromium the browser suites (test/support/browser.ts) and the docs audit (test/scripts/docs-audit.mjs)
// drive: Debian's (.ci/run installs it; CHROMIUM_PATH overrides), headless, on this machine's closed network.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Without the background-networking flags Chromium's own connections are refused, many at a time. Playwright gives each context a fresh, empty profile. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The browser; a clear error when Chromium is not installed. */
export async function launchChromium() {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: .ci/run installs Debian's chromium (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
