import { z } from 'zod';
import { balanceAlertSettingsView } from '@wallet/platform';
import { ledgerV1 } from '@wallet/proto';
import type { LedgerClient } from '../../clients/ledger-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { balanceAlertPageToApi, balanceAlertsToApi } from './presenters.js';
import {
  ALERTS_DOC,
  AlertHistoryQuery,
  alertHistoryRequest,
  AlertRailParam,
  BalanceAlertEventPageSchema,
  BalanceAlertSettingsSchema,
  BalanceAlertsSchema,
  PutBalanceAlertBody,
} from './schemas.js';

const RAILS = { BREB: ledgerV1.Rail.BREB, ACH: ledgerV1.Rail.ACH } as const;

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
      handler: async ({ call }) => ({ status: 200, body: balanceAlertsToApi(await ledger.getBalanceAlerts({}, call)) }),
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
      params: z.object({ rail: AlertRailParam }),
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
      handler: async ({ query, call }) => ({ status: 200, body: balanceAlertPageToApi(await ledger.listBalanceAlertEvents(alertHistoryRequest(query), call)) }),
    }),
  ];
}
