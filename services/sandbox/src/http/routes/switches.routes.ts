import type { Router } from '@koa/router';
import { z } from 'zod';
import { ProviderError, transferNotFound } from '../../app/errors.js';
import { transferView } from '../../app/rail-transfers.js';
import type { Rail } from '../../domain/rails.js';
import type { SandboxHttpDeps } from '../context.js';
import { parse, readJson } from '../http-input.js';

const upDown = z.enum(['up', 'down']).optional();
const faultsBody = z.strictObject({ directory: upDown, brebRail: upDown, achRail: upDown, pse: upDown, callbacks: upDown });
const failBody = z.strictObject({ errorMessage: z.string().trim().min(1).max(300).optional() }).default({});
const railParam = z.enum(['breb', 'ach']).transform((r): Rail => (r === 'breb' ? 'BREB' : 'ACH'));

/** Test and demo switches: faults, forced outcomes, redelivery. */
export function switchRoutes(router: Router, d: SandboxHttpDeps): void {
  router.get('/sandbox/faults', async (ctx) => {
    ctx.body = await d.store.faults();
  });
  router.post('/sandbox/faults', async (ctx) => {
    const b = parse(faultsBody, (await readJson(ctx.req)) ?? {});
    const faults = await d.store.setFaults(b);
    d.log.info({ faults }, 'faults changed');
    if (b.callbacks === 'up') d.dispatcher.wake(); // held callbacks go out now
    ctx.body = faults;
  });

  router.post('/sandbox/rails/:rail/transfers/:transactionId/:outcome', async (ctx) => {
    const outcome = ctx.params.outcome;
    const rail = railParam.safeParse(ctx.params.rail);
    if (!rail.success || (outcome !== 'complete' && outcome !== 'fail')) {
      throw new ProviderError(404, 'ROUTE_NOT_FOUND', 'Ruta no encontrada.');
    }
    const body = (await readJson(ctx.req)) ?? {};
    const transactionId = String(ctx.params.transactionId ?? '');
    const settled =
      outcome === 'complete'
        ? await d.rails.force(rail.data, transactionId, 'COMPLETED')
        : await d.rails.force(rail.data, transactionId, 'FAILED', parse(failBody, body).errorMessage);
    ctx.body = transferView(settled);
  });

  router.post('/sandbox/callbacks/:transactionId/redeliver', async (ctx) => {
    const transactionId = String(ctx.params.transactionId ?? '');
    const r = await d.dispatcher.redeliver(transactionId);
    if (r.outcome === 'not_found') {
      const known = (await d.store.findTransfer(transactionId)) ?? (await d.pse.get(transactionId)) ?? (await d.collect.findIncoming(transactionId));
      if (!known) throw transferNotFound();
      throw new ProviderError(409, 'NO_CALLBACK_YET', 'La transferencia aún no tiene resultado: no hay notificación que reenviar.');
    }
    const base = { eventId: r.callback.eventId, transactionId };
    if (r.outcome === 'queued') {
      ctx.status = 202;
      ctx.body = { ...base, delivered: false, queued: true, reason: r.reason === 'callbacks_down' ? 'CALLBACKS_DOWN' : 'IN_FLIGHT' };
      return;
    }
    ctx.body = { ...base, delivered: r.result.delivered, queued: !r.result.delivered, responseStatus: r.result.status, attempts: r.callback.attempts };
  });
}
