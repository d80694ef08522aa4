import { depositReturnRoutes } from './api/deposits/returns.routes.js';
import Koa from 'koa';
import type { Next } from 'koa';
import type { Router } from '@koa/router';
import type { Redis } from 'ioredis';
import { AppError, type Database, type Logger } from '@wallet/platform';
import { AdminAudit } from './audit/admin-audit.js';
import { AdminChanges } from './app/admin-changes.js';
import { ApprovalRequests } from './app/approval-requests.js';
import { CredentialDelivery } from './app/credential-delivery.js';
import { CreditRequestAdmin } from './app/credit-request-admin.js';
import { ApiKeyAdmin } from './app/api-key-admin.js';
import { BalanceQuery } from './api/wallets/balance-query.js';
import { CompanyAdmin } from './app/company-admin.js';
import { LedgerAdmin } from './app/ledger-admin.js';
import { MoneyExceptions } from './app/money-exceptions.js';
import { ExceptionResolutions } from './app/exception-resolutions.js';
import { MailOutbox } from './app/mail-outbox.js';
import { SecurityNotices } from './app/security-notices.js';
import { AdminAuthenticator, AdminTokenVerifier } from './auth/admin-token.js';
import { OperatorAuth } from './auth/operator-auth.js';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator.js';
import type { GatewayConfig } from './config.js';
import { accessLog } from './http/access-log.js';
import { apiKeyAreaGuard } from './http/auth.js';
import { apiVersioning } from './http/api-versions.js';
import { LATEST_API_VERSION } from './api-versions.js';
import { ClientIpResolver } from './http/client-ip.js';
import type { GatewayContext, GatewayState } from './http/context.js';
import { errorMiddleware } from './http/errors.js';
import { IdempotencyGuard } from './http/idempotency.js';
import { requestIdMiddleware } from './http/request-id.js';
import { requestTelemetry } from './http/tracing.js';
import type { AnyRoute } from './http/route.js';
import { buildRouter } from './http/router.js';
import { adminApiKeyRoutes } from './api/admin/api-keys/api-keys.routes.js';
import { adminAuditRoutes } from './api/admin/audit/audit.routes.js';
import { adminCompanyRoutes } from './api/admin/companies/companies.routes.js';
import { adminCreditRequestRoutes } from './api/admin/credit-requests/credit-requests.routes.js';
import { adminApprovalRequestRoutes } from './api/admin/approval-requests/approval-requests.routes.js';
import { adminOperatorRoutes } from './api/admin/operators/operators.routes.js';
import { adminLedgerRoutes } from './api/admin/ledger/ledger.routes.js';
import { dictionaryRoutes } from './api/dictionaries/dictionaries.routes.js';
import { docsRoutes } from './api/docs/docs.routes.js';
import { asyncApiRoutes } from './api/docs/asyncapi.routes.js';
import { dashboardUiRoutes } from './api/dashboard/ui.routes.js';
import { statementRoutes } from './api/wallets/statements.routes.js';
import { walletRoutes } from './api/wallets/wallets.routes.js';
import { walletMoveRoutes } from './api/wallets/moves.routes.js';
import { scheduleRoutes } from './api/schedules/schedules.routes.js';
import { Schedules } from './app/schedules/schedules.js';
import { systemClock, type SchedulerClock } from './app/schedules/clock.js';
import { balanceAlertRoutes } from './api/wallets/alerts.routes.js';
import type { LedgerClient } from './clients/ledger-client.js';
import type { TransferClient } from './clients/transfer-client.js';
import type { DepositClient } from './clients/deposit-client.js';
import type { CollectKeyClient } from './clients/collect-key-client.js';
import type { ReceiptClient } from './clients/receipt-client.js';
import type { WebhookClient } from './clients/webhook-client.js';
import { webhookEndpointRoutes } from './api/webhooks/endpoints.routes.js';
import { adminWebhookRoutes } from './api/admin/webhooks/webhooks.routes.js';
import { receiptRoutes } from './api/wallets/receipts.routes.js';
import { receiptVerificationRoutes } from './api/receipts/verify.routes.js';
import { collectKeyRoutes } from './api/collect-keys/collect-keys.routes.js';
import { adminCollectKeyRoutes } from './api/admin/collect-keys/collect-keys.routes.js';
import { depositRoutes } from './api/deposits/deposits.routes.js';
import { cobroRoutes } from './api/cobros/cobros.routes.js';
import { counterpartyRoutes } from './api/counterparties/counterparties.routes.js';
import { adminAmlRoutes } from './api/admin/aml/aml.routes.js';
import { adminExceptionsRoutes } from './api/admin/exceptions/exceptions.routes.js';
import { adminReconciliationRoutes } from './api/admin/reconciliations/reconciliations.routes.js';
import type { ReconciliationClient } from './clients/reconciliation-client.js';
import { adminDashboardUserRoutes } from './api/admin/dashboard-users/dashboard-users.routes.js';
import { authRoutes } from './api/dashboard/auth.routes.js';
import { dashboardRoutes } from './api/dashboard/approvals.routes.js';
import { dashboardApprovalPolicyRoutes } from './api/dashboard/approval-policy.routes.js';
import { dashboardCounterpartyRoutes } from './api/dashboard/counterparties.routes.js';
import { approvalPolicyRoutes } from './api/approval-policies/approval-policy.routes.js';
import { dashboardBatchRoutes } from './api/dashboard/batches.routes.js';
import { dashboardCobroRoutes } from './api/dashboard/cobros.routes.js';
import { dashboardDepositReturnRoutes } from './api/dashboard/returns.routes.js';
import { dashboardScheduleRoutes } from './api/dashboard/schedules.routes.js';
import { dashboardBalanceAlertRoutes } from './api/dashboard/balance-alerts.routes.js';
import { DashboardAuth } from './auth/dashboard-auth.js';
import { transactionRoutes } from './api/wallets/transactions.routes.js';
import { transferRoutes } from './api/transfers/transfers.routes.js';
import { batchRoutes } from './api/transfers/batches/batches.routes.js';
import { webhookRoutes } from './api/webhooks/provider-callbacks.routes.js';
import { buildOpenApiDocument } from './openapi/document.js';
import { ApiKeyStore } from './persistence/api-key.store.js';
import { CompanyStore } from './persistence/company.store.js';
import { RollingWindowLimiter } from './ratelimit/rolling-window-limiter.js';

export type AppConfig = Pick<
  GatewayConfig,
  | 'nodeEnv'
  | 'publicUrl'
  | 'adminToken'
  | 'apiKeyPepper'
  | 'encryptionKey'
  | 'sessionTtlSeconds'
  | 'dashboard'
  | 'adminSessionTtlSeconds'
  | 'creditDualControlCents'
  | 'creditControls'
  | 'approvals'
  | 'apiKeyPrefix'
  | 'apiKeyCacheTtlMs'
  | 'trustedProxies'
  | 'rateLimit'
  | 'idempotencyKeyTtlSeconds'
  | 'transferSendDeadlineMs'
  | 'batchExecuteDeadlineMs'
  | 'reconciliationRerunDeadlineMs'
> & {
  admin: Pick<GatewayConfig['admin'], 'alsoOnPublicPort'>;
};

export interface AppDeps {
  config: AppConfig;
  log: Logger;
  db: Database;
  ledger: LedgerClient;
  transfer: TransferClient;
  deposit: DepositClient;
  collectKey: CollectKeyClient;
  receipt: ReceiptClient;
  /** The webhook service (outgoing webhooks); optional so inert compositions (the OpenAPI spec test) need not pass one. */
  webhook?: WebhookClient;
  /** The reconciliation service (admin only); optional so inert compositions need not pass one. */
  reconciliation?: ReconciliationClient;
  redis: Redis;
  /**
   * The durable mail outbox and the company's security notices (server.ts builds them with
   * wake-ups of the mail sender and the outbox relay). Without them createApp builds its own, whose
   * rows wait for a sender and a relay to poll them.
   */
  mailOutbox?: MailOutbox;
  securityNotices?: SecurityNotices;
  /** The scheduler's clock (server.ts: the test clock in development when configured); default the system's. */
  schedulerClock?: SchedulerClock;
}

export interface GatewayApp {
  /** The public listener's app: every route, /admin/* only when `config.admin.alsoOnPublicPort` (never in production). */
  app: Koa<GatewayState>;
  /** The admin listener's app: /admin/* only; anything else is 404 ROUTE_NOT_FOUND. */
  adminApp: Koa<GatewayState>;
  router: Router<GatewayState>;
  routes: readonly AnyRoute[];
  openApiDocument(): Record<string, unknown>;
  /** Mails written in a use case's transaction, sent after commit (app/mail-outbox.ts). */
  mailOutbox: MailOutbox;
  /** `company.security_changed`: event + e-mail to the company's admins, in a use case's transaction. */
  securityNotices: SecurityNotices;
  /** Waits for background writes and stops timers (the caller closes db/redis/ledger). */
  close(): Promise<void>;
}

/** The document's `info.version`: the newest API version (api-versions.ts). */
export const API_VERSION = LATEST_API_VERSION;

/** The paths of the admin listener (and, outside production, of the public one too). */
const ADMIN_AREA = /^\/admin(\/|$)/i;

/** Composes the HTTP application from its dependencies; shared by main.ts and the tests. */
export function createApp(deps: AppDeps): GatewayApp {
  const { config, log, db, ledger, transfer, deposit, collectKey, receipt, redis } = deps;
  const companies = new CompanyStore();
  const apiKeys = new ApiKeyStore();
  const authenticator = new ApiKeyAuthenticator(
    db,
    apiKeys,
    {
      pepper: config.apiKeyPepper,
      prefix: config.apiKeyPrefix,
      cacheTtlMs: config.apiKeyCacheTtlMs,
    },
    log,
  );
  // Every replica forgets a changed key or company at once (database triggers → NOTIFY); see the class.
  authenticator
    .watchChanges(db)
    .catch((err: unknown) => log.warn({ err: (err as Error).message }, 'API key change feed not started; cached keys live the short TTL'));
  const limiter = new RollingWindowLimiter(redis, { prefix: config.rateLimit.prefix, windowSeconds: config.rateLimit.windowSeconds });

  const mailOutbox = deps.mailOutbox ?? new MailOutbox({ secretKey: config.encryptionKey });
  const securityNotices = deps.securityNotices ?? new SecurityNotices(mailOutbox);
  const companyAdmin = new CompanyAdmin(db, companies, ledger, authenticator);
  const keyAdmin = new ApiKeyAdmin(db, companies, apiKeys, authenticator, { pepper: config.apiKeyPepper, prefix: config.apiKeyPrefix }, securityNotices);
  const ledgerAdmin = new LedgerAdmin(ledger, companyAdmin);
  const production = config.nodeEnv === 'production';
  const audit = new AdminAudit(db, log);
  const operators = new OperatorAuth(
    db,
    {
      pepper: config.apiKeyPepper,
      secretKey: config.encryptionKey,
      sessionTtlSeconds: config.adminSessionTtlSeconds,
      production,
      issuer: 'Billetera Pagos (operadores)',
    },
    log,
  );
  const creditRequests = new CreditRequestAdmin(db, ledgerAdmin, companyAdmin, config.creditControls, log);
  const dashboardAuth = new DashboardAuth(
    db,
    {
      pepper: config.apiKeyPepper,
      secretKey: config.encryptionKey,
      sessionTtlSeconds: config.sessionTtlSeconds,
      issuer: 'Billetera Pagos',
      lockout: config.dashboard.lockout,
      invitationTtlSeconds: config.dashboard.invitationTtlSeconds,
      ...(config.dashboard.publicUrl ? { publicUrl: config.dashboard.publicUrl } : {}),
    },
    log,
  );
  dashboardAuth.start();
  const approvals = new ApprovalRequests(db, securityNotices, config.approvals, log);
  const changes = new AdminChanges(
    db,
    approvals,
    {
      companies: companyAdmin,
      keys: keyAdmin,
      dashboard: dashboardAuth,
      operators,
      ledger: ledgerAdmin,
      transfer,
      delivery: new CredentialDelivery(mailOutbox, { production }, log),
      notices: securityNotices,
    },
    log,
  );

  const moneyExceptions = new MoneyExceptions(
    { transfers: transfer, deposits: deposit, recon: deps.reconciliation ?? ({} as ReconciliationClient), collectKeys: collectKey },
    { rerunDeadlineMs: config.reconciliationRerunDeadlineMs },
  );

  let document: Record<string, unknown> | undefined;
  const schedules = new Schedules(db, ledger, deps.schedulerClock ?? systemClock, transfer);
  const routes: AnyRoute[] = [
    ...walletRoutes(new BalanceQuery(ledger), ledger),
    ...statementRoutes(ledger),
    ...transactionRoutes(ledger),
    ...walletMoveRoutes(ledger),
    ...scheduleRoutes(schedules),
    ...balanceAlertRoutes(ledger),
    ...receiptRoutes(receipt),
    ...receiptVerificationRoutes(receipt),
    ...transferRoutes(transfer, { sendDeadlineMs: config.transferSendDeadlineMs }),
    ...batchRoutes(transfer, { createDeadlineMs: 55_000, executeDeadlineMs: config.batchExecuteDeadlineMs }),
    ...depositRoutes(deposit),
    ...collectKeyRoutes(collectKey),
    ...depositReturnRoutes(collectKey, deposit),
    ...cobroRoutes(deposit),
    ...counterpartyRoutes(transfer),
    ...approvalPolicyRoutes(transfer),
    ...adminCollectKeyRoutes(collectKey),
    ...dictionaryRoutes(),
    ...webhookRoutes(transfer, deposit, collectKey),
    ...webhookEndpointRoutes(deps.webhook ?? ({} as WebhookClient)),
    ...adminWebhookRoutes(deps.webhook ?? ({} as WebhookClient)),
    ...adminCompanyRoutes(companyAdmin, changes),
    ...adminApiKeyRoutes(keyAdmin, changes),
    ...adminLedgerRoutes(ledgerAdmin, creditRequests, changes, config.creditDualControlCents),
    ...adminCreditRequestRoutes(creditRequests),
    ...adminApprovalRequestRoutes(approvals),
    ...adminOperatorRoutes(operators, changes),
    ...adminAuditRoutes(audit),
    ...adminAmlRoutes(transfer, changes),
    ...adminExceptionsRoutes(moneyExceptions, new ExceptionResolutions(moneyExceptions, approvals)),
    ...adminReconciliationRoutes(deps.reconciliation ?? ({} as ReconciliationClient)),
    ...adminDashboardUserRoutes(dashboardAuth, changes, { enrolment: config.dashboard.enrolment }),
    ...authRoutes(dashboardAuth),
    ...dashboardRoutes(dashboardAuth, transfer),
    ...dashboardBatchRoutes(dashboardAuth, transfer),
    ...dashboardApprovalPolicyRoutes(dashboardAuth, transfer),
    ...dashboardCounterpartyRoutes(transfer),
    ...dashboardCobroRoutes(dashboardAuth, deposit),
    ...dashboardDepositReturnRoutes(dashboardAuth, collectKey, deposit),
    ...dashboardScheduleRoutes(schedules),
    ...dashboardBalanceAlertRoutes(ledger),
    ...docsRoutes(() => openApiDocument()),
    ...asyncApiRoutes(),
    ...dashboardUiRoutes(),
  ];
  const openApiDocument = () =>
    (document ??= buildOpenApiDocument(routes, { version: API_VERSION, perMinute: config.rateLimit.perMinute, publicUrl: config.publicUrl }));

  const idempotency = new IdempotencyGuard(db, { ttlSeconds: config.idempotencyKeyTtlSeconds, encryptionKey: config.encryptionKey }, log);
  idempotency.start();
  const router = buildRouter(routes, {
    authenticator,
    admin: new AdminAuthenticator(new AdminTokenVerifier(config.adminToken), operators, { production }),
    audit,
    log,
    limiter,
    clientIp: new ClientIpResolver(config.trustedProxies),
    rateLimits: { perMinute: config.rateLimit.perMinute, perKeyFactor: config.rateLimit.perKeyFactor },
    sessions: dashboardAuth,
    idempotency,
  });

  // Two listeners share the routes; each refuses (404, as an unknown route) the paths it does not serve.
  const isAdminPath = (path: string) => ADMIN_AREA.test(path);
  const koa = (areas: { admin: boolean; other: boolean }) => {
    const serves = (path: string) => (isAdminPath(path) ? areas.admin : areas.other);
    const app = new Koa<GatewayState>({ proxy: false });
    app.silent = true; // request errors are logged once, by errorMiddleware
    // What escapes it (e.g. a client that hangs up mid-response) is logged here, without the request.
    app.on('error', (err: Error) => log.warn({ err: err.message }, 'response error'));
    app.use(requestTelemetry); // span + log context around everything below
    app.use(requestIdMiddleware);
    app.use(accessLog(log));
    app.use(errorMiddleware(log));
    app.use(apiVersioning());
    app.use(async (ctx: GatewayContext, next: Next) => {
      // By path here, and again by the matched route in the router (whatever spelling matched it).
      ctx.state.areas = areas;
      if (!serves(ctx.path)) throw new AppError('ROUTE_NOT_FOUND');
      await next();
    });
    app.use(apiKeyAreaGuard);
    app.use(router.routes());
    return app;
  };
  const app = koa({ admin: config.admin.alsoOnPublicPort, other: true });
  const adminApp = koa({ admin: true, other: false });

  return {
    app,
    adminApp,
    router,
    routes,
    openApiDocument,
    mailOutbox,
    securityNotices,
    async close() {
      limiter.close();
      await idempotency.close();
      await dashboardAuth.close();
      await authenticator.flush();
    },
  };
}
