import { BlockList } from 'node:net';
import { z } from 'zod';
import { baseEnvSchema, env, parseConfig, SECRET_VARIABLES } from '@wallet/platform';
import { RATE_CLASSES, type RateClass } from './ratelimit/rate-classes.js';

/**
 * Outside production, X-Forwarded-For is believed from loopback only (a proxy on the same host, and
 * the tests). In production no proxy is trusted unless TRUSTED_PROXIES names it: the ingress
 * controller's own addresses. Trusting whole private ranges let any in-cluster or VPN caller rotate
 * the header and reset its per-IP limits (docs/security.md "Operator lockouts and trusted proxies").
 */
export const DEFAULT_TRUSTED_PROXIES = '127.0.0.0/8,::1/128';
/**
 * Ranges that hold far more than a proxy (every pod, VPN user or customer behind a CGNAT): a trusted
 * proxy entry covering one of them whole is refused in production.
 */
export const WHOLE_PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'] as const;
/** The admin listener's port in production when GATEWAY_ADMIN_PORT is not set. */
export const DEFAULT_ADMIN_PORT = 8081;
/** Operator credits above this many centavos wait for a second operator (CONTRACT §10): 1.000.000 pesos. */
export const DEFAULT_CREDIT_DUAL_CONTROL_CENTS = 100_000_000;
/** How long an `Idempotency-Key` answer is replayed unless set (the API's documented 30 days). */
export const IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS = 30 * 86_400;
/** The table grows in proportion to the TTL (docs/benchmarks.md): three times the documented window is the ceiling. */
export const IDEMPOTENCY_KEY_TTL_MAX_SECONDS = 90 * 86_400;
const centsVar = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional();

const cidrList = z.string().transform((value, ctx) => {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && s.toLowerCase() !== 'none');
  for (const item of items) {
    if (!isCidr(item)) ctx.addIssue({ code: 'custom', message: `not an IP address or CIDR: ${item}` });
  }
  return items;
});

function isCidr(item: string): boolean {
  const [addr, bits, ...rest] = item.split('/');
  if (rest.length > 0 || !addr) return false;
  const family = isIpLiteral(addr);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Whether a TRUSTED_PROXIES entry contains the whole of one of WHOLE_PRIVATE_RANGES (0.0.0.0/0 contains them all). */
export function coversWholePrivateRange(entry: string): string | undefined {
  const [addr, bits] = entry.split('/') as [string, string | undefined];
  if (bits === undefined) return undefined;
  const family = isIpLiteral(addr) === 6 ? 'ipv6' : 'ipv4';
  const list = new BlockList();
  list.addSubnet(addr, Number(bits), family);
  return WHOLE_PRIVATE_RANGES.find((range) => {
    const [net, rangeBits] = range.split('/') as [string, string];
    return (isIpLiteral(net) === 6 ? 'ipv6' : 'ipv4') === family && Number(bits) <= Number(rangeBits) && list.check(net, family);
  });
}

function isIpLiteral(addr: string): 0 | 4 | 6 {
  if (/^(\d{1,3})(\.\d{1,3}){3}$/.test(addr) && addr.split('.').every((o) => Number(o) <= 255)) return 4;
  if (/^[0-9a-fA-F:.]+$/.test(addr) && addr.includes(':')) return 6;
  return 0;
}

const rateLimitVars = Object.fromEntries(
  (Object.keys(RATE_CLASSES) as RateClass[]).map((c) => [RATE_CLASSES[c].envVar, env.int(RATE_CLASSES[c].perMinute, 1)]),
) as Record<string, ReturnType<typeof env.int>>;

export const gatewayEnvSchema = baseEnvSchema
  .extend({
    GATEWAY_PORT: env.port(8080),
    GATEWAY_HOST: z.string().min(1).default('0.0.0.0'),
    GATEWAY_OPS_PORT: env.port(9100),
    /**
     * The admin listener (/admin/* only). Production: always opened (default 8081) and /admin is not
     * served on GATEWAY_PORT. Elsewhere: opened only when set (0 = any free port); /admin stays on
     * the public port too.
     */
    GATEWAY_ADMIN_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    /** Bind address of the admin listener (default: GATEWAY_HOST). */
    GATEWAY_ADMIN_HOST: z.string().min(1).optional(),
    LEDGER_GRPC_ADDR: z.string().min(1).default('127.0.0.1:50051'),
    TRANSFER_GRPC_ADDR: z.string().min(1).default('127.0.0.1:50052'),
    DEPOSIT_GRPC_ADDR: z.string().min(1).default('127.0.0.1:50053'),
    COLLECT_KEY_GRPC_ADDR: z.string().min(1).default('127.0.0.1:50054'),
    RECEIPT_GRPC_ADDR: z.string().min(1).default('127.0.0.1:50055'),
    WEBHOOK_GRPC_ADDR: z.string().min(1).default('127.0.0.1:50056'),
    /** The reconciliation service (admin: /admin/reconciliations and its money exceptions). */
    RECONCILIATION_GRPC_ADDR: z.string().min(1).default('127.0.0.1:50057'),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .default('redis://127.0.0.1:6379'),
    /** Secrets (dev-secrets.ts): development defaults outside production, required there. */
    /**
     * The shared bootstrap token. Outside production: a development convenience (its default works
     * on every admin route but those needing an operator). In production: optional; only invites the
     * first two operators, and inert for ever once they enrolled (gateway.bootstrap_state) — remove it then.
     */
    ADMIN_TOKEN: z.string().min(12, 'must be at least 12 characters').optional(),
    API_KEY_PEPPER: env.secret('API_KEY_PEPPER'),
    /** Encrypts secrets the gateway keeps (dashboard users' TOTP secrets, stored Idempotency-Key answers). */
    GATEWAY_ENCRYPTION_KEY: env.secret('GATEWAY_ENCRYPTION_KEY'),
    /** Operator session lifetime (absolute; short: an operator logs in again with password + TOTP). */
    ADMIN_SESSION_TTL_SECONDS: env.int(1800, 60).pipe(z.number().max(43_200, 'must be at most 43200 (12 h)')),
    /** Operator credits strictly above this amount need a second operator's approval (CONTRACT §10). */
    ADMIN_CREDIT_DUAL_CONTROL_CENTS: centsVar,
    /** The same setting under the name the security issue used; must agree with the other when both are set. */
    ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS: centsVar,
    /** Running totals of operators' direct credits (docs/security.md, insider threat model): the window… */
    ADMIN_CREDIT_WINDOW_SECONDS: env.int(86_400, 60),
    /** …the most one operator may credit in it without a second operator (default: the dual-control threshold)… */
    ADMIN_CREDIT_OPERATOR_WINDOW_CENTS: centsVar,
    /** …and the most one company may receive in it from operators' direct credits (default: the same). */
    ADMIN_CREDIT_COMPANY_WINDOW_CENTS: centsVar,
    /**
     * How long a change that weakens a control (a lower threshold, a WRITE key, a new dashboard
     * user or operator, an AML removal) waits after it is requested before a second operator may
     * approve it: the company is told at once and can object. Default 24 h in production, 0 elsewhere.
     */
    ADMIN_APPROVAL_DELAY_SECONDS: z.coerce
      .number()
      .int()
      .min(0)
      .max(30 * 86_400)
      .optional(),
    /** An approval request not decided within this expires (7 days). */
    ADMIN_APPROVAL_TTL_SECONDS: env.int(7 * 86_400, 60),
    /** Dashboard session lifetime (CONTRACT §5: 8 h). */
    SESSION_TTL_SECONDS: env.int(28_800, 1),
    /**
     * How dashboard users are provisioned: `invitation` (the user chooses the password and enrols
     * the TOTP secret; forced in production) or `direct` (the operator receives both; the default
     * elsewhere, so the local demo prints working credentials).
     */
    DASHBOARD_ENROLMENT: z.enum(['invitation', 'direct']).optional(),
    /** How long an invitation can be redeemed (72 h; tests shorten it). */
    DASHBOARD_INVITATION_TTL_SECONDS: env.int(259_200, 1),
    /**
     * Where integrators reach this API, e.g. https://api.pagos.example.co: the OpenAPI document's
     * `servers`, so generated clients have a base URL. Unset: http://localhost:<GATEWAY_PORT> outside
     * production; in production the document keeps a relative `/` (and the gateway warns at start).
     */
    GATEWAY_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** Origin of the dashboard in invitation links, e.g. https://pagos.example.co (without it the link is a path on the gateway). */
    DASHBOARD_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
    /** Per-account lockout: failures older than this no longer count (15 min; tests shorten it). */
    DASHBOARD_LOCKOUT_WINDOW_SECONDS: env.int(900, 1),
    /** Per-account lockout: how long the account stays locked (15 min; tests shorten it). */
    DASHBOARD_LOCKOUT_SECONDS: env.int(900, 1),
    /** How long a validated API key is trusted from memory (revocation on another replica takes at most this long). */
    API_KEY_CACHE_TTL_MS: env.int(2000, 0).pipe(z.number().max(5000, 'must be at most 5000 (revocation latency)')),
    /**
     * Proxies whose X-Forwarded-For is believed (CIDRs or addresses; empty or `none`: none). Unset:
     * loopback outside production, none in production. In production an entry covering a whole
     * private range (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) is refused: name the
     * ingress controller's addresses.
     */
    TRUSTED_PROXIES: cidrList.optional(),
    RATE_LIMIT_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9:_-]+$/)
      .default('rl'),
    /** Rolling window length; 60 s per the reference (tests shorten it). */
    RATE_LIMIT_WINDOW_SECONDS: env.int(60, 1),
    /**
     * Each credential (API key, dashboard user) has its own budget per class beside the per-IP one:
     * this many times the class limit (× the company's multiplier), whatever IPs it is used from.
     * 1: one key gets the documented per-IP allowance, and spreading it over IPs adds nothing.
     */
    RATE_LIMIT_PER_KEY_FACTOR: env.int(1, 1).pipe(z.number().max(100, 'must be at most 100')),
    /** Apply pending migrations at start; defaults to true outside production (there a Job runs `migrate`). */
    GATEWAY_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
    /** Postgres connections of the gateway's own schema (API keys, sessions, users, idempotency answers). */
    GATEWAY_DB_POOL_MAX: env.int(10, 1),
    GRPC_DEADLINE_MS: env.int(5000, 100),
    /**
     * Deadline of the transfer service's Send (a send checks the directory, reserves and dispatches:
     * longer than other calls). Past it the client gets 503 while the send may have been accepted;
     * a retry with the same Idempotency-Key gets that transfer (tests shorten it).
     */
    TRANSFER_SEND_DEADLINE_MS: env.int(20_000, 100),
    /**
     * Deadline of a bulk payout's execute: every line re-checked (AML, limits, policy, fees), recorded as a
     * transfer and the total reserved before the 202, so it grows with the batch (a 5,000-line batch took
     * 2.7 s on a quiet machine and 19 s on a loaded one). Past it the client gets 503 while the execution
     * may go on; executing again is safe (it answers the batch as it is).
     */
    BATCH_EXECUTE_DEADLINE_MS: env.int(55_000, 100),
    /**
     * Deadline of a money exception resolved by `rerun`: the reconciliation runs the break's day
     * again (fetches the report, matches every line) before it answers.
     */
    RECONCILIATION_RERUN_DEADLINE_MS: env.int(60_000, 1000),
    SHUTDOWN_GRACE_MS: env.int(20000, 1000),
    /**
     * How long an `Idempotency-Key` answer is replayed: 30 days, as the API documents (tests shorten it;
     * production refuses less than the documented 30 days). At most 90 days: the table's size grows with it
     * (docs/benchmarks.md, "Idempotency keys kept 30 days").
     */
    IDEMPOTENCY_KEY_TTL_SECONDS: env
      .int(IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS, 1)
      .pipe(z.number().max(IDEMPOTENCY_KEY_TTL_MAX_SECONDS, `must be at most ${IDEMPOTENCY_KEY_TTL_MAX_SECONDS} (90 days)`)),
    /**
     * The gateway's mail (security notices to a company's admins; credentials to their
     * owner). Same names as pse-deposit. Required in production; elsewhere the sandbox's SMTP sink
     * (smtp://127.0.0.1:2525) and a development sender.
     */
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\/[^/]/, 'must be an smtp:// or smtps:// URL')
      .optional(),
    MAIL_FROM: z.string().min(3).optional(),
    SMTP_TIMEOUT_MS: env.int(10_000, 100),
    /** How often the mail outbox is polled for mails to send (a change that wrote one nudges it at once). */
    MAIL_SENDER_INTERVAL_MS: env.int(1_000, 10),
    /** First retry of a mail the SMTP server did not take; doubles each attempt up to MAIL_RETRY_MAX_DELAY_MS. */
    MAIL_RETRY_BASE_MS: env.int(30_000, 10),
    MAIL_RETRY_MAX_DELAY_MS: env.int(3_600_000, 10),
    /** After this many failed attempts a mail is given up (its body blanked; the row stays for the record). */
    MAIL_MAX_ATTEMPTS: env.int(20, 1),
    /** Scheduled payouts (docs/schedules.md): whether this replica starts due runs (every replica may; they share the work). */
    SCHEDULER_ENABLED: z.enum(['true', 'false', '1', '0', 'yes', 'no']).default('true'),
    /** How often the scheduler looks for due runs. */
    SCHEDULER_INTERVAL_MS: env.int(1_000, 10),
    /** How many due schedules one claim takes (in one transaction, `for update skip locked`). */
    SCHEDULER_BATCH: env.int(200, 1),
    /** How many runs one replica executes at once (each a send or a move). */
    SCHEDULER_CONCURRENCY: env.int(16, 1),
    /** A run claimed but not finished for this long (its replica died, a downstream was down) is tried again, under its same key. */
    SCHEDULER_RUN_LEASE_SECONDS: env.int(60, 1),
    /** A run that could not reach the services for this long after it was due fails (SERVICE_UNAVAILABLE); the schedule goes on. */
    SCHEDULER_RUN_GIVE_UP_SECONDS: env.int(3_600, 1),
    /**
     * Development and tests only (refused in production): a file holding the instant the scheduler takes
     * as now (RFC 3339), read at each look; absent or empty, the real time. Lets an end-to-end test cross a
     * holiday, a restart and a replica kill without waiting.
     */
    SCHEDULER_TEST_CLOCK_FILE: z.string().min(1).optional(),
    ...rateLimitVars,
  })
  .superRefine((cfg, ctx) => {
    if (
      cfg.ADMIN_CREDIT_DUAL_CONTROL_CENTS !== undefined &&
      cfg.ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS !== undefined &&
      cfg.ADMIN_CREDIT_DUAL_CONTROL_CENTS !== cfg.ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS'],
        message: 'disagrees with ADMIN_CREDIT_DUAL_CONTROL_CENTS (set one of them)',
      });
    }
    const adminPort = cfg.GATEWAY_ADMIN_PORT ?? (cfg.NODE_ENV === 'production' ? DEFAULT_ADMIN_PORT : undefined);
    if (adminPort !== undefined && adminPort !== 0 && (adminPort === cfg.GATEWAY_PORT || adminPort === cfg.GATEWAY_OPS_PORT)) {
      ctx.addIssue({ code: 'custom', path: ['GATEWAY_ADMIN_PORT'], message: 'must differ from GATEWAY_PORT and GATEWAY_OPS_PORT' });
    }
    if (cfg.NODE_ENV === 'production') {
      if (cfg.IDEMPOTENCY_KEY_TTL_SECONDS < IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS) {
        ctx.addIssue({
          code: 'custom',
          path: ['IDEMPOTENCY_KEY_TTL_SECONDS'],
          message: `must be at least ${IDEMPOTENCY_KEY_TTL_DEFAULT_SECONDS} (30 days) in production: the API promises clients a 30-day replay`,
        });
      }
      if (cfg.SCHEDULER_TEST_CLOCK_FILE !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['SCHEDULER_TEST_CLOCK_FILE'], message: 'is a test clock: refused in production' });
      }
      for (const name of ['SMTP_URL', 'MAIL_FROM'] as const) {
        if (!cfg[name])
          ctx.addIssue({ code: 'custom', path: [name], message: 'is required in production (security notices and credentials go out by e-mail)' });
      }
      for (const entry of cfg.TRUSTED_PROXIES ?? []) {
        const range = coversWholePrivateRange(entry);
        if (range) {
          ctx.addIssue({
            code: 'custom',
            path: ['TRUSTED_PROXIES'],
            message: `${entry} covers all of ${range}: any caller there could forge X-Forwarded-For and reset its rate limits; name the ingress controller's addresses`,
          });
        }
      }
      if (cfg.DASHBOARD_ENROLMENT === 'direct') {
        ctx.addIssue({
          code: 'custom',
          path: ['DASHBOARD_ENROLMENT'],
          message: "must be invitation in production (an operator must never hold a dashboard user's password or TOTP secret)",
        });
      }
    }
  });

export interface GatewayConfig {
  nodeEnv: 'development' | 'test' | 'production';
  logLevel: string;
  databaseUrl: string;
  dbPoolMax: number;
  port: number;
  host: string;
  /** The API's base URL for integrators (the OpenAPI `servers`); undefined in production when unset. */
  publicUrl: string | undefined;
  opsPort: number;
  /**
   * The admin listener: `port` undefined = none. `alsoOnPublicPort`: /admin is served on the
   * public port as well (never in production).
   */
  admin: { port: number | undefined; host: string; alsoOnPublicPort: boolean };
  ledgerAddress: string;
  transferAddress: string;
  depositAddress: string;
  collectKeyAddress: string;
  receiptAddress: string;
  webhookAddress: string;
  reconciliationAddress: string;
  redisUrl: string;
  /** The shared bootstrap token; undefined in production when ADMIN_TOKEN is unset. */
  adminToken: string | undefined;
  apiKeyPepper: string;
  encryptionKey: string;
  sessionTtlSeconds: number;
  dashboard: {
    enrolment: 'invitation' | 'direct';
    invitationTtlSeconds: number;
    publicUrl: string | undefined;
    lockout: { windowSeconds: number; lockSeconds: number };
  };
  adminSessionTtlSeconds: number;
  /** Operator credits strictly above this need a second operator. */
  creditDualControlCents: number;
  creditControls: { dualControlCents: number; windowSeconds: number; operatorWindowCents: number; companyWindowCents: number };
  approvals: { delaySeconds: number; ttlSeconds: number };
  apiKeyPrefix: 'wk_live_' | 'wk_test_';
  apiKeyCacheTtlMs: number;
  trustedProxies: string[];
  rateLimit: { prefix: string; windowSeconds: number; perMinute: Record<RateClass, number>; perKeyFactor: number };
  migrateOnStart: boolean;
  grpcDeadlineMs: number;
  transferSendDeadlineMs: number;
  batchExecuteDeadlineMs: number;
  reconciliationRerunDeadlineMs: number;
  shutdownGraceMs: number;
  idempotencyKeyTtlSeconds: number;
  /** NATS JetStream: the gateway publishes its outbox (company.security_changed). */
  nats: { url: string; namespace: string; streamReplicas: number };
  mail: { smtpUrl: string; from: string; timeoutMs: number; intervalMs: number; retryBaseMs: number; retryMaxDelayMs: number; maxAttempts: number };
  /** Scheduled payouts (docs/schedules.md). */
  scheduler: SchedulerConfig;
}

export interface SchedulerConfig {
  enabled: boolean;
  intervalMs: number;
  batch: number;
  concurrency: number;
  runLeaseSeconds: number;
  runGiveUpSeconds: number;
  /** Development and tests only: the file the test clock reads. */
  testClockFile: string | undefined;
}

/** Outside production: the sandbox's SMTP sink (deploy/local/up.sh) and this sender. */
export const LOCAL_SMTP_SINK_URL = 'smtp://127.0.0.1:2525';
export const LOCAL_MAIL_FROM = 'Billetera Pagos <no-reply@pagos.example.co>';

/** Parses the environment once; every bad variable is named in one error. */
export function loadConfig(source: Record<string, string | undefined> = process.env): GatewayConfig {
  const e = parseConfig(gatewayEnvSchema, source);
  const production = e.NODE_ENV === 'production';
  const dualControlCents = e.ADMIN_CREDIT_DUAL_CONTROL_CENTS ?? e.ADMIN_CREDIT_APPROVAL_THRESHOLD_CENTS ?? DEFAULT_CREDIT_DUAL_CONTROL_CENTS;
  const perMinute = Object.fromEntries(
    (Object.keys(RATE_CLASSES) as RateClass[]).map((c) => [c, (e as Record<string, unknown>)[RATE_CLASSES[c].envVar] as number]),
  ) as Record<RateClass, number>;
  return {
    nodeEnv: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    databaseUrl: e.DATABASE_URL,
    dbPoolMax: e.GATEWAY_DB_POOL_MAX,
    port: e.GATEWAY_PORT,
    publicUrl: e.GATEWAY_PUBLIC_URL?.replace(/\/+$/, '') ?? (production || e.GATEWAY_PORT === 0 ? undefined : `http://localhost:${e.GATEWAY_PORT}`),
    host: e.GATEWAY_HOST,
    opsPort: e.GATEWAY_OPS_PORT,
    admin: {
      port: e.GATEWAY_ADMIN_PORT ?? (production ? DEFAULT_ADMIN_PORT : undefined),
      host: e.GATEWAY_ADMIN_HOST ?? e.GATEWAY_HOST,
      alsoOnPublicPort: !production,
    },
    ledgerAddress: e.LEDGER_GRPC_ADDR,
    transferAddress: e.TRANSFER_GRPC_ADDR,
    depositAddress: e.DEPOSIT_GRPC_ADDR,
    collectKeyAddress: e.COLLECT_KEY_GRPC_ADDR,
    receiptAddress: e.RECEIPT_GRPC_ADDR,
    webhookAddress: e.WEBHOOK_GRPC_ADDR,
    reconciliationAddress: e.RECONCILIATION_GRPC_ADDR,
    redisUrl: e.REDIS_URL,
    adminToken: e.ADMIN_TOKEN ?? (production ? undefined : SECRET_VARIABLES.ADMIN_TOKEN.dev),
    apiKeyPepper: e.API_KEY_PEPPER,
    encryptionKey: e.GATEWAY_ENCRYPTION_KEY,
    sessionTtlSeconds: e.SESSION_TTL_SECONDS,
    dashboard: {
      enrolment: production ? 'invitation' : (e.DASHBOARD_ENROLMENT ?? 'direct'),
      invitationTtlSeconds: e.DASHBOARD_INVITATION_TTL_SECONDS,
      publicUrl: e.DASHBOARD_PUBLIC_URL,
      lockout: { windowSeconds: e.DASHBOARD_LOCKOUT_WINDOW_SECONDS, lockSeconds: e.DASHBOARD_LOCKOUT_SECONDS },
    },
    adminSessionTtlSeconds: e.ADMIN_SESSION_TTL_SECONDS,
    creditDualControlCents: dualControlCents,
    creditControls: {
      dualControlCents,
      windowSeconds: e.ADMIN_CREDIT_WINDOW_SECONDS,
      operatorWindowCents: e.ADMIN_CREDIT_OPERATOR_WINDOW_CENTS ?? dualControlCents,
      companyWindowCents: e.ADMIN_CREDIT_COMPANY_WINDOW_CENTS ?? dualControlCents,
    },
    approvals: {
      delaySeconds: e.ADMIN_APPROVAL_DELAY_SECONDS ?? (production ? 86_400 : 0),
      ttlSeconds: e.ADMIN_APPROVAL_TTL_SECONDS,
    },
    apiKeyPrefix: production ? 'wk_live_' : 'wk_test_',
    apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    trustedProxies: e.TRUSTED_PROXIES ?? (production ? [] : DEFAULT_TRUSTED_PROXIES.split(',')),
    rateLimit: { prefix: e.RATE_LIMIT_PREFIX, windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS, perMinute, perKeyFactor: e.RATE_LIMIT_PER_KEY_FACTOR },
    migrateOnStart: e.GATEWAY_MIGRATE_ON_START === undefined ? !production : ['true', '1', 'yes'].includes(e.GATEWAY_MIGRATE_ON_START),
    grpcDeadlineMs: e.GRPC_DEADLINE_MS,
    transferSendDeadlineMs: e.TRANSFER_SEND_DEADLINE_MS,
    batchExecuteDeadlineMs: e.BATCH_EXECUTE_DEADLINE_MS,
    reconciliationRerunDeadlineMs: e.RECONCILIATION_RERUN_DEADLINE_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    idempotencyKeyTtlSeconds: e.IDEMPOTENCY_KEY_TTL_SECONDS,
    nats: { url: e.NATS_URL, namespace: e.BUS_NAMESPACE, streamReplicas: e.NATS_STREAM_REPLICAS },
    mail: {
      smtpUrl: e.SMTP_URL ?? LOCAL_SMTP_SINK_URL,
      from: e.MAIL_FROM ?? LOCAL_MAIL_FROM,
      timeoutMs: e.SMTP_TIMEOUT_MS,
      intervalMs: e.MAIL_SENDER_INTERVAL_MS,
      retryBaseMs: e.MAIL_RETRY_BASE_MS,
      retryMaxDelayMs: e.MAIL_RETRY_MAX_DELAY_MS,
      maxAttempts: e.MAIL_MAX_ATTEMPTS,
    },
    scheduler: {
      enabled: ['true', '1', 'yes'].includes(e.SCHEDULER_ENABLED),
      intervalMs: e.SCHEDULER_INTERVAL_MS,
      batch: e.SCHEDULER_BATCH,
      concurrency: e.SCHEDULER_CONCURRENCY,
      runLeaseSeconds: e.SCHEDULER_RUN_LEASE_SECONDS,
      runGiveUpSeconds: e.SCHEDULER_RUN_GIVE_UP_SECONDS,
      testClockFile: e.SCHEDULER_TEST_CLOCK_FILE,
    },
  };
}
