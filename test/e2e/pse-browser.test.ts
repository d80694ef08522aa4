import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { eventually } from '@wallet/platform/testing';
import { startStack } from '../support/stack.js';

/** A payer in a real (headless) browser: opens the pay link, picks a bank, pays. */
describe('PSE pay page in Chromium', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startStack({ deposits: true });
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('picks a bank, pays, and the deposit becomes ASSIGNED with the net credited', async () => {
    const co = await stack.provision('Tienda Ñandú <S.A.S.>', { taxRegime: 'SIMPLE' });
    const created = await stack.http('POST', '/deposits/pse', {
      token: co.writeKey,
      body: {
        amountCents: 12_345_678,
        payerDocumentTypeId: 1,
        payerDocumentNumber: '52123456',
        payerFirstName: 'Marta',
        payerLastName: 'Ríos',
        payerEmail: 'marta@example.com',
      },
    });
    expect(created.status).toBe(201);

    const page = await browser.newPage();
    await page.goto(created.body.paygatewayUrl);
    const text = await page.locator('body').innerText();
    expect(text).toContain('$ 123.456,78');
    expect(text).toContain('Tienda Ñandú <S.A.S.>'); // shown as text, not parsed as markup
    await page.locator('select').first().selectOption({ label: 'Davivienda' });
    const outDir = join(process.cwd(), '..', '.tools', 'screenshots');
    mkdirSync(outDir, { recursive: true });
    await page.screenshot({ path: join(outDir, 'pse-pay-page.png'), fullPage: true });
    await page.getByRole('button', { name: 'Pagar' }).click();
    await page.waitForLoadState('domcontentloaded');
    await page.screenshot({ path: join(outDir, 'pse-pay-result.png'), fullPage: true });

    const d = await eventually(
      async () => {
        const r = await stack.http('GET', '/deposits', { token: co.readKey });
        const dep = r.body.deposits.find((x: any) => x.id === created.body.id);
        return dep?.status === 'ASSIGNED' ? dep : undefined;
      },
      15_000,
      100,
    );
    expect(d.payerBank).toBe('Davivienda');
    const bal = await stack.http('GET', '/wallets/balance', { token: co.readKey });
    expect(bal.body.wallets.find((w: any) => w.rail === 'ACH').availableCents).toBe(d.netAmountCents);
    expect((await stack.invariants()).violations).toEqual([]);
  });
});
