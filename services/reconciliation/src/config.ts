import { tmpdir } from 'node:os';
import { baseEnvSchema, env, parseConfig, ConfigError } from '@wallet/platform';
import { Cron } from 'croner';
import { z } from 'zod';
import { REPORT_RAILS, type ReportRail } from './domain/report.js';

/** The reconciliation service's environment (docs/reconciliation.md "Configuration"), parsed once; every bad variable is named in one error. */
export const reconciliationEnvSchema = baseEnvSchema.extend({
  RECONCILIATION_GRPC_HOST: env.str('0.0.0.0'),
  RECONCILIATION_GRPC_PORT: env.port(50057),
  RECONCILIATION_OPS_PORT: env.port(9107),
  /** Apply pending migrations at start; defaults to true outside production. */
  RECONCILIATION_MIGRATE_ON_START: z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
  RECONCILIATION_DB_POOL_MAX: env.int(5, 1),
  LEDGER_GRPC_ADDR: env.str('127.0.0.1:50051'),
  TRANSFER_GRPC_ADDR: env.str('127.0.0.1:50052'),
  DEPOSIT_GRPC_ADDR: env.str('127.0.0.1:50053'),
  COLLECT_KEY_GRPC_ADDR: env.str('127.0.0.1:50054'),
  /** The providers' reports: `<base>/<rail>/<date>.csv`. */
  RECON_REPORTS_URL: env.url('http://127.0.0.1:8090/sandbox/reports'),
  /** Sent as `Authorization: Bearer …` when set (a secret: never logged). */
  RECON_REPORTS_TOKEN: z.string().min(1).optional(),
  /** Cron (in RECON_TIMEZONE) of every rail's daily run of the previous day; "off" disables. */
  RECON_SCHEDULE: env.str('0 6 * * *'),
  RECON_SCHEDULE_BREB: z.string().min(1).optional(),
  RECON_SCHEDULE_ACH: z.string().min(1).optional(),
  RECON_SCHEDULE_PSE: z.string().min(1).optional(),
  RECON_SCHEDULE_BREB_INBOUND: z.string().min(1).optional(),
  RECON_TIMEZONE: env.str('America/Bogota'),
  RECON_RAILS: env.str('breb,ach,pse,breb-inbound'),
  RECON_RETRY_ATTEMPTS: env.int(6, 1),
  RECON_RETRY_BASE_MS: env.int(60_000, 1),
  RECON_WORK_DIR: env.str(tmpdir()),
  /** A RUNNING run whose process has not beaten for this long is FAILED ("interrupted") by the sweeper. */
  RECON_STALE_RUN_MS: env.int(5 * 60_000, 1_000),
  RECON_SWEEPER_INTERVAL_MS: env.int(30_000, 10),
});

type Raw = z.infer<typeof reconciliationEnvSchema>;
export type ReconciliationConfig = Omit<Raw, 'RECONCILIATION_MIGRATE_ON_START' | 'RECON_RAILS'> & {
  RECONCILIATION_MIGRATE_ON_START: boolean;
  RECON_RAILS: ReportRail[];
  /** The cron of each rail of RECON_RAILS ("off": not scheduled). */
  schedules: Partial<Record<ReportRail, string>>;
};

const OVERRIDE: Record<ReportRail, keyof Raw> = {
  breb: 'RECON_SCHEDULE_BREB',
  ach: 'RECON_SCHEDULE_ACH',
  pse: 'RECON_SCHEDULE_PSE',
  'breb-inbound': 'RECON_SCHEDULE_BREB_INBOUND',
};

export function loadConfig(source: Record<string, string | undefined>): ReconciliationConfig {
  const raw = parseConfig(reconciliationEnvSchema, source);
  const problems: string[] = [];
  const rails = raw.RECON_RAILS.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = rails.filter((r) => !(REPORT_RAILS as readonly string[]).includes(r));
  if (bad.length > 0 || rails.length === 0)
    problems.push(`RECON_RAILS: a comma-separated list of ${REPORT_RAILS.join(', ')} (not ${bad.join(', ') || 'empty'})`);
  try {
    new Intl.DateTimeFormat('en', { timeZone: raw.RECON_TIMEZONE });
  } catch {
    problems.push('RECON_TIMEZONE: not an IANA time zone');
  }
  const schedules: Partial<Record<ReportRail, string>> = {};
  for (const rail of rails as ReportRail[]) {
    const name = OVERRIDE[rail];
    const cron = (raw[name] as string | undefined) ?? raw.RECON_SCHEDULE;
    if (cron !== 'off') {
      try {
        new Cron(cron, { paused: true }).stop();
      } catch (err) {
        problems.push(`${raw[name] !== undefined ? name : 'RECON_SCHEDULE'}: not a cron pattern ("off" disables): ${(err as Error).message}`);
      }
    }
    schedules[rail] = cron;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const production = raw.NODE_ENV === 'production';
  const flag = raw.RECONCILIATION_MIGRATE_ON_START;
  return {
    ...raw,
    RECON_RAILS: [...new Set(rails)] as ReportRail[],
    schedules,
    RECONCILIATION_MIGRATE_ON_START: flag === undefined ? !production : ['true', '1', 'yes'].includes(flag),
  };
}
