import { z } from 'zod';
import { balanceAlertCrossingOfRecord, balanceAlertEventView, balanceAlertSettingsView, type CallContext } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { queryInt } from '../../http/validation.js';
import { BalanceAlertEventPageSchema, BalanceAlertSettingsSchema, BalanceAlertsSchema, PutBalanceAlertBody } from './schemas.js';

const RAILS = { BREB: ledgerV1.Rail.BREB, ACH: ledgerV1.Rail.ACH } as const;
const RailParam = z.enum(['BREB', 'ACH']).meta({ description: 'The wallet: BREB or ACH.' });

export const ALERTS_DOC =
  'Per wallet, a low threshold and optionally a high one, with hysteresis (docs/balance-alerts.md). The ledger checks each wallet that moved within ' +
  'about a second: when the available balance falls below the low threshold the wallet enters `LOW` (webhook `wallet.balance_low`, an e-mail to ' +
  "the company's dashboard ADMINs) and leaves it only once it is back at low + hysteresis (`wallet.balance_recovered`); above the high threshold " +
  'it enters `HIGH` (`wallet.balance_high`) until it is back at high − hysteresis (`wallet.balance_normal`). Each crossing alerts once.';

export const AlertHistoryQuery = z.strictObject({
  rail: RailParam.optional(),
  limit: queryInt(1, 100, 20),
  cursor: z.string().min(1).max(512).optional().meta({ description: 'The `nextCursor` of the previous page.' }),
});

/** Both wallets' settings and state (GET /wallets/alerts, GET /dashboard/wallets/alerts). */
export async function readBalanceAlerts(ledger: LedgerClient, call: CallContext) {
  const r = await ledger.getBalanceAlerts({}, call);
  return { items: r.alerts.map(balanceAlertSettingsView) };
}

/** A page of crossings, newest first (GET /wallets/alerts/history, GET /dashboard/wallets/alerts/history). */
export async function readBalanceAlertHistory(ledger: LedgerClient, query: z.infer<typeof AlertHistoryQuery>, call: CallContext) {
  const r = await ledger.listBalanceAlertEvents(
    { ...(query.rail ? { rail: RAILS[query.rail] } : {}), limit: query.limit, ...(query.cursor ? { cursor: query.cursor } : {}) },
    call,
  );
  return { items: r.items.map((e) => balanceAlertEventView(balanceAlertCrossingOfRecord(e))), nextCursor: r.nextCursor ?? null, hasMore: r.hasMore };
}

/** Balance alerts: the ledger's SetBalanceAlert / GetBalanceAlerts / ListBalanceAlertEvents, for the caller's company. */
export function balanceAlertRoutes(ledger: LedgerClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/wallets/alerts',
      operationId: 'getWalletBalanceAlerts',
      tags: ['Wallets'],
      summary: "Both wallets' balance alerts and their state",
      description: ALERTS_DOC,
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      responses: { 200: { description: 'BREB then ACH, set or not.', schema: BalanceAlertsSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: await readBalanceAlerts(ledger, call) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/wallets/{rail}/alerts',
      operationId: 'setWalletBalanceAlert',
      tags: ['Wallets'],
      summary: "Set (or remove) a wallet's balance alert",
      description:
        ALERTS_DOC +
        '\n\nThe new settings are evaluated at once: a wallet already below a new low threshold answers `state: LOW` and alerts now, once. ' +
        'Setting the same values again alerts nothing. A wallet not provisioned yet may have its alert set: it is evaluated once the wallet exists.',
      auth: { kind: 'apiKey', scope: 'WRITE' },
      rateClass: 'READS',
      params: z.object({ rail: RailParam }),
      body: PutBalanceAlertBody,
      responses: { 200: { description: 'The wallet’s alert as it stands now.', schema: BalanceAlertSettingsSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ params, body, call }) => {
        const r = await ledger.setBalanceAlert(
          {
            rail: RAILS[params.rail],
            lowThresholdCents: BigInt(body.lowThresholdCents ?? 0),
            ...(body.highThresholdCents != null ? { highThresholdCents: BigInt(body.highThresholdCents) } : {}),
            hysteresisCents: BigInt(body.hysteresisCents ?? 0),
          },
          call,
        );
        return { status: 200, body: balanceAlertSettingsView(r) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/wallets/alerts/history',
      operationId: 'listWalletBalanceAlertEvents',
      tags: ['Wallets'],
      summary: 'The balance alerts raised, newest first',
      description:
        'Every crossing of a threshold (docs/balance-alerts.md), as its webhook carried it. Cursor pagination: `cursor` = the previous `nextCursor`.',
      auth: { kind: 'apiKey', scope: 'READ' },
      rateClass: 'READS',
      query: AlertHistoryQuery,
      responses: { 200: { description: 'A page of crossings.', schema: BalanceAlertEventPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => ({ status: 200, body: await readBalanceAlertHistory(ledger, query, call) }),
    }),
  ];
}
