import type { LedgerClient } from '../../clients/ledger-client.js';
import { defineRoute, type AnyRoute } from '../../http/route.js';
import { balanceAlertPageToApi, balanceAlertsToApi } from '../wallets/presenters.js';
import { ALERTS_DOC, AlertHistoryQuery, alertHistoryRequest, BalanceAlertEventPageSchema, BalanceAlertsSchema } from '../wallets/schemas.js';

/**
 * «Alertas de saldo» in the dashboard (docs/balance-alerts.md), read only and for any role: both
 * wallets' alert settings and state, and the crossings, as GET /wallets/alerts… answer them. The
 * thresholds are set through the API (PUT /wallets/{rail}/alerts).
 */
export function dashboardBalanceAlertRoutes(ledger: LedgerClient): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/dashboard/wallets/alerts',
      operationId: 'dashboardGetWalletBalanceAlerts',
      tags: ['Dashboard'],
      summary: "Both wallets' balance alerts and their state",
      description: ALERTS_DOC,
      auth: { kind: 'session' },
      rateClass: 'READS',
      responses: { 200: { description: 'BREB then ACH, set or not.', schema: BalanceAlertsSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ call }) => ({ status: 200, body: balanceAlertsToApi(await ledger.getBalanceAlerts({}, call)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/dashboard/wallets/alerts/history',
      operationId: 'dashboardListWalletBalanceAlertEvents',
      tags: ['Dashboard'],
      summary: 'The balance alerts raised, newest first (filter: rail; cursor)',
      auth: { kind: 'session' },
      rateClass: 'READS',
      query: AlertHistoryQuery,
      responses: { 200: { description: 'A page of crossings.', schema: BalanceAlertEventPageSchema } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ query, call }) => ({ status: 200, body: balanceAlertPageToApi(await ledger.listBalanceAlertEvents(alertHistoryRequest(query), call)) }),
    }),
  ];
}
