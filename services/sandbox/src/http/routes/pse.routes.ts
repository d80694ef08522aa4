import type { Router } from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { ProviderError } from '../../app/errors.js';
import { isPseBank } from '../../domain/pse.js';
import type { SandboxHttpDeps } from '../context.js';
import { amountCentsSchema, callbackUrlSchema, invalidRequest, parse, readForm, readJson, text, transactionIdSchema } from '../http-input.js';
import { PAGE_HEADERS, finalPage, notFoundPage, payPage } from '../pse-page.js';

const linkBody = z.object({
  depositId: transactionIdSchema,
  amountCents: amountCentsSchema,
  // As long as what the wallet sends: a company name (≤ 200) and the payer's first and last names (≤ 100 each, one space).
  companyName: text(200),
  payerName: text(201),
  payerEmail: z.email().max(254),
  description: text(300).optional(),
  expiresAt: z.iso.datetime({ offset: true }),
  callbackUrl: callbackUrlSchema,
});
const refundBody = z.object({
  refundId: transactionIdSchema,
  depositId: transactionIdSchema,
  amountCents: amountCentsSchema,
});
const payBody = z.strictObject({
  outcome: z.enum(['APPROVED', 'REJECTED']),
  payerBank: text(100).optional(),
});

function html(ctx: ParameterizedContext, status: number, page: string): void {
  ctx.set(PAGE_HEADERS);
  ctx.status = status;
  ctx.body = page;
}

/** The PSE gateway: link creation (the product), the pay page and its form (the payer), scripted switches (tests). */
export function pseRoutes(router: Router, d: SandboxHttpDeps): void {
  router.post('/pse/links', async (ctx) => {
    const b = parse(linkBody, await readJson(ctx.req));
    const { link, created } = await d.pse.create({
      depositId: b.depositId,
      amountCents: b.amountCents,
      companyName: b.companyName,
      payerName: b.payerName,
      payerEmail: b.payerEmail,
      description: b.description ?? null,
      expiresAt: b.expiresAt,
      callbackUrl: b.callbackUrl,
    });
    if (!created) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = 201;
    ctx.body = { linkId: link.linkId, paygatewayUrl: d.pse.payUrl(link.depositId) };
  });

  // The product refunds all or part of a paid payment to its payer (docs/sandbox.md "PSE gateway"), as many times as the paid amount
  // allows; the pse report shows each refund as a REFUNDED (OUT) line whose our_id is the refundId.
  router.post('/pse/refunds', async (ctx) => {
    const b = parse(refundBody, await readJson(ctx.req));
    const r = await d.pse.refund(b);
    if (r.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = r.replayed ? 200 : 201;
    ctx.body = {
      refundId: r.refund.refundId,
      depositId: r.refund.depositId,
      providerTransferId: r.providerTransferId,
      status: 'REFUNDED',
      amountCents: Number(r.refund.amountCents),
      refundedAt: r.refund.refundedAt,
    };
  });

  router.get('/pse/pay/:depositId', async (ctx) => {
    const link = await d.pse.get(String(ctx.params.depositId ?? ''));
    if (!link) return html(ctx, 404, notFoundPage());
    html(ctx, 200, payPage(link));
  });

  // The pay page's form (action=pay|reject, bank). A browser gets a result page; a client that
  // asks for JSON gets `{ status }` and the JSON errors.
  router.post('/pse/pay/:depositId', async (ctx) => {
    const depositId = String(ctx.params.depositId ?? '');
    const wantsJson = ctx.accepts('html', 'json') === 'json';
    const form = await readForm(ctx.req);
    const action = form.get('action');
    const bank = (form.get('bank') ?? '').trim();
    const link = await d.pse.get(depositId);
    if (action !== 'pay' && action !== 'reject') {
      if (wantsJson || !link) throw invalidRequest([{ path: 'action', message: 'Debe ser pay o reject.' }]);
      return html(ctx, 400, payPage(link, 'Elija Pagar o Rechazar.'));
    }
    if (action === 'pay' && !isPseBank(bank)) {
      if (wantsJson || !link) throw invalidRequest([{ path: 'bank', message: 'Seleccione un banco de la lista.' }]);
      return html(ctx, 400, payPage(link, 'Seleccione su banco para continuar.'));
    }
    const payerBank = bank && isPseBank(bank) ? bank : null;
    try {
      const done = await d.pse.decide(depositId, action === 'pay' ? 'APPROVED' : 'REJECTED', payerBank);
      if (wantsJson) {
        ctx.body = { status: done.status };
        return;
      }
      html(ctx, 200, finalPage(done, true));
    } catch (err) {
      if (wantsJson || !(err instanceof ProviderError)) throw err;
      const now = await d.pse.get(depositId);
      if (!now) return html(ctx, 404, notFoundPage());
      html(ctx, err.status, payPage(now));
    }
  });

  router.post('/sandbox/pse/:depositId/pay', async (ctx) => {
    const b = parse(payBody, await readJson(ctx.req));
    const done = await d.pse.decide(String(ctx.params.depositId ?? ''), b.outcome, b.payerBank ?? null);
    ctx.body = { status: done.status };
  });

  router.post('/sandbox/pse/:depositId/reverse', async (ctx) => {
    const done = await d.pse.reverse(String(ctx.params.depositId ?? ''));
    ctx.body = { status: done.status };
  });
}
