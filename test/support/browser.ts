import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';

/** The browser the browser suites drive (test/support/chromium.mjs, shared with the docs audit script). */
export async function launchChromium(): Promise<Browser> {
  const { launchChromium: launch } = (await import(join(dirname(fileURLToPath(import.meta.url)), 'chromium.mjs'))) as { launchChromium(): Promise<Browser> };
  return launch();
}
