// The alerts of the chart (templates/prometheusrule.yaml) and the ledger-check CronJob, rendered by a
// real helm: the PrometheusRule's shape (schema), `promtool check rules` on the rendered rules,
// `promtool test rules` with unit tests of the key alerts (input series → the alerts that must, and
// must not, fire), every metric an alert reads exported by some process, every runbook link an
// existing section of docs/operations.md. promtool is Debian's package `prometheus`
// (test/scripts/setup.mjs installs it for `npm test`); without it the promtool tests are skipped,
// loudly, and the schema and static checks still run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { CHART, REPO, helm, helmBinary } from './support/helm.js';
import { prometheusRuleSchema } from './support/prometheus-rule.js';

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any };
type Rule = { alert: string; expr: string; for?: string; labels: Record<string, string>; annotations: Record<string, string> };

const PRODUCTION = join(CHART, 'values-production.yaml');
const MESH_ISSUER = ['--set', 'mesh.certificates.issuerRef.name=wallet-mesh-ca'];
const MONEY = [
  'WalletMoneyExceptionOpen',
  'WalletSagaStuck',
  'WalletLedgerInvariantViolated',
  'WalletLedgerSelfCheckViolated',
  'WalletReconciliationBreakOpen',
  'WalletReconciliationRunFailed',
];

function render(args: string[]): Manifest[] {
  return parseAllDocuments(helm(['template', 'rel', CHART, '--namespace', 'wallet', ...args]))
    .map((d) => d.toJSON() as Manifest)
    .filter((m) => m);
}

function promtoolPath(): string | undefined {
  const r = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? 'promtool' : undefined;
}
const PROMTOOL = promtoolPath();
if (!PROMTOOL)
  process.stderr.write(
    '\n[alerts.test] ***** promtool NOT FOUND: `promtool check rules` and `promtool test rules` are SKIPPED. *****\n' +
      "[alerts.test] Install Debian's package `prometheus` (test/scripts/setup.mjs promtool does it as root).\n\n",
  );
const withPromtool = PROMTOOL ? it : it.skip;

let production: Manifest[];
let rule: Manifest;
let rules: Rule[];
let work: string;

beforeAll(() => {
  helmBinary();
  production = render(['-f', PRODUCTION]);
  rule = production.find((m) => m.kind === 'PrometheusRule')!;
  rules = rule.spec.groups.flatMap((g: { rules: Rule[] }) => g.rules);
  work = mkdtempSync(join(tmpdir(), 'wallet-alerts-'));
}, 240_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** GitHub's anchor of a Markdown heading. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** Names of the metrics registered with prom-client anywhere in the product's code (string literals in files that import it). */
function exportedMetricNames(): Set<string> {
  const names = new Set<string>();
  const roots = [join(REPO, 'gateway', 'src'), ...readdirSync(join(REPO, 'services')).map((s) => join(REPO, 'services', s, 'src'))];
  const walk = (dir: string): string[] => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
    return entries.flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [join(dir, e.name)] : [],
    );
  };
  for (const file of roots.flatMap(walk)) {
    const text = readFileSync(file, 'utf8');
    // a metric registered with prom-client, or through platform's processGauge (one per process)
    if (!/from 'prom-client'|processGauge\(/.test(text)) continue;
    for (const m of text.matchAll(/'([a-z][a-z0-9]*(?:_[a-z0-9]+)+)'/g)) names.add(m[1]!);
  }
  return names;
}

/** The metric names an alert expression selects (every selector in the chart's rules has braces). */
function metricsOf(expr: string): string[] {
  return [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1]!).map((n) => n.replace(/_(bucket|sum|count)$/, ''));
}

describe('alert rules', () => {
  it('render only when metrics.prometheusRule is on (off by default, on in the production values) and match the CRD', () => {
    expect(render(MESH_ISSUER).filter((m) => m.kind === 'PrometheusRule' || m.kind === 'CronJob')).toEqual([]);
    const r = prometheusRuleSchema.safeParse(rule);
    expect(r.success ? [] : r.error.issues).toEqual([]);
    expect(rule.metadata.labels).toMatchObject({ release: 'prometheus' });
    const broken = structuredClone(rule);
    broken.spec.groups[0].rules[0].for = 'a while';
    expect(prometheusRuleSchema.safeParse(broken).success).toBe(false);
  });

  it('give every alert a severity (page for money), a summary, a description and a runbook section that exists', () => {
    const docs = readFileSync(join(REPO, 'docs', 'operations.md'), 'utf8');
    const anchors = new Set([...docs.matchAll(/^#{2,4} (.+)$/gm)].map((m) => slug(m[1]!)));
    expect(rules.map((r) => r.alert).sort()).toEqual(
      [
        ...MONEY,
        'WalletLedgerCheckNotRunning',
        'WalletOutboxLag',
        'WalletConsumerLag',
        'WalletConsumerFailing',
        'WalletWebhookBacklog',
        'WalletRailErrorRate',
        'WalletRailLatencyHigh',
      ].sort(),
    );
    for (const r of rules) {
      expect([r.alert, r.labels.severity]).toEqual([r.alert, MONEY.includes(r.alert) ? 'page' : 'ticket']);
      expect(r.labels.team).toBe('payments');
      expect(r.annotations.summary?.length).toBeGreaterThan(10);
      expect(r.annotations.description?.length).toBeGreaterThan(20);
      const [base, anchor] = r.annotations.runbook_url!.split('#');
      expect([r.alert, base]).toEqual([r.alert, 'https://git.example.co/payments-wallet/blob/main/docs/operations.md']);
      expect([r.alert, anchor, anchors.has(anchor!)]).toEqual([r.alert, r.alert.toLowerCase(), true]);
    }
  });

  it('read only metrics that some process exports', () => {
    const exported = exportedMetricNames();
    // Not vacuous: names are found, and a name nobody registers is not among them.
    expect(exported.has('wallet_exceptions_open')).toBe(true);
    expect(exported.has('wallet_no_such_metric')).toBe(false);
    const used = [...new Set(rules.flatMap((r) => metricsOf(r.expr)))].sort();
    expect(used.length).toBeGreaterThanOrEqual(10);
    expect(used.filter((n) => !exported.has(n))).toEqual([]);
  });

  withPromtool('pass promtool check rules', () => {
    const file = join(work, 'rules.yaml');
    writeFileSync(file, stringify(rule.spec));
    const out = execFileSync(PROMTOOL!, ['check', 'rules', file], { encoding: 'utf8' });
    expect(out).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  withPromtool('fire on the series they are written for, and not on the ones they are not (promtool test rules)', () => {
    // Annotations are checked by `check rules` (their templates); the unit tests compare labels.
    const bare = { groups: rule.spec.groups.map((g: any) => ({ ...g, rules: g.rules.map(({ annotations: _a, ...r }: any) => r) })) };
    writeFileSync(join(work, 'bare-rules.yaml'), stringify(bare));
    const ns = 'namespace="wallet"';
    const job = 'job="rel-wallet-ledger-check"';
    const page = { severity: 'page', team: 'payments' };
    const ticket = { severity: 'ticket', team: 'payments' };
    // The ledger check's staleness alert fires whenever its series are missing: every case but the ledger's has them, fresh.
    const ledgerFresh = [
      { series: `wallet_ledger_check_last_completed_timestamp_seconds{${job}}`, values: '0+60x60' },
      { series: `wallet_ledger_check_violations{${job},check="holds"}`, values: '0x60' },
    ];
    const tests = [
      {
        name: 'an open money exception pages after 5 minutes; a reconciliation break is its own alert',
        interval: '1m',
        input_series: [
          ...ledgerFresh,
          { series: `wallet_exceptions_open{${ns},service="transfer",kind="RAIL_COMPLETED_AFTER_RELEASE",pod="transfer-a"}`, values: '0 0 1x20' },
          { series: `wallet_exceptions_open{${ns},service="transfer",kind="RAIL_COMPLETED_AFTER_RELEASE",pod="transfer-b"}`, values: '0 0 1x20' },
          { series: `wallet_exceptions_open{${ns},service="reconciliation",kind="amount_mismatch",pod="recon-a"}`, values: '0 0 2x20' },
        ],
        alert_rule_test: [
          { eval_time: '4m', alertname: 'WalletMoneyExceptionOpen', exp_alerts: [] },
          {
            eval_time: '10m',
            alertname: 'WalletMoneyExceptionOpen',
            exp_alerts: [{ exp_labels: { ...page, service: 'transfer', kind: 'RAIL_COMPLETED_AFTER_RELEASE' } }],
          },
          { eval_time: '10m', alertname: 'WalletReconciliationBreakOpen', exp_alerts: [{ exp_labels: { ...page, kind: 'amount_mismatch' } }] },
        ],
      },
      {
        name: 'a saga past its horizon pages; a DISPATCHED Bre-B transfer under its own horizon and a transfer awaiting approval do not',
        interval: '1m',
        input_series: [
          ...ledgerFresh,
          { series: `wallet_transfer_saga_oldest_seconds{${ns},rail="BREB",state="COMPLETING"}`, values: '0+60x40' },
          { series: `wallet_transfer_saga_oldest_seconds{${ns},rail="BREB",state="DISPATCHED"}`, values: '0+60x40' },
          { series: `wallet_transfer_saga_oldest_seconds{${ns},rail="ACH",state="AWAITING_APPROVAL"}`, values: '86400+60x40' },
        ],
        alert_rule_test: [
          { eval_time: '16m', alertname: 'WalletSagaStuck', exp_alerts: [] },
          { eval_time: '25m', alertname: 'WalletSagaStuck', exp_alerts: [{ exp_labels: { ...page, rail: 'BREB', state: 'COMPLETING' } }] },
        ],
      },
      {
        name: 'a ledger invariant violation pages at once; a ledger check that stops completing opens a ticket',
        interval: '1m',
        input_series: [
          { series: `wallet_ledger_check_violations{${job},check="holds"}`, values: '0 0 2x10' },
          { series: `wallet_ledger_check_violations{${job},check="journal"}`, values: '0x12' },
          // the nightly full run found what the incremental runs do not read (an old entry rewritten)
          { series: `wallet_ledger_check_violations{job="rel-wallet-ledger-check-full",check="journal"}`, values: '0 0 0 0 1x8' },
          { series: `wallet_ledger_check_last_completed_timestamp_seconds{${job}}`, values: '0x90' },
        ],
        alert_rule_test: [
          { eval_time: '1m', alertname: 'WalletLedgerInvariantViolated', exp_alerts: [] },
          { eval_time: '3m', alertname: 'WalletLedgerInvariantViolated', exp_alerts: [{ exp_labels: { ...page, check: 'holds' } }] },
          {
            eval_time: '5m',
            alertname: 'WalletLedgerInvariantViolated',
            exp_alerts: [{ exp_labels: { ...page, check: 'holds' } }, { exp_labels: { ...page, check: 'journal' } }],
          },
          { eval_time: '60m', alertname: 'WalletLedgerCheckNotRunning', exp_alerts: [] },
          { eval_time: '80m', alertname: 'WalletLedgerCheckNotRunning', exp_alerts: [{ exp_labels: ticket }] },
        ],
      },
      {
        name: 'a failed reconciliation run pages; lags, backlogs and rail errors open tickets',
        interval: '1m',
        input_series: [
          ...ledgerFresh,
          { series: `wallet_reconciliation_runs_total{${ns},rail="ACH",outcome="FAILED"}`, values: '0 0 1x30' },
          { series: `wallet_reconciliation_runs_total{${ns},rail="BREB",outcome="RECONCILED"}`, values: '0 0 1x30' },
          { series: `outbox_lag_seconds{${ns},schema="transfer"}`, values: '0 0 120x30' },
          { series: `outbox_lag_seconds{${ns},schema="ledger"}`, values: '5x32' },
          { series: `nats_consumer_pending_messages{${ns},stream="TRANSFERS",consumer="webhook"}`, values: '5000x32' },
          { series: `wallet_webhook_oldest_due_seconds{${ns},pod="webhook-a"}`, values: '600x32' },
          { series: `wallet_rail_requests_total{${ns},rail="BREB",operation="dispatch",outcome="error"}`, values: '0+10x32' },
          { series: `wallet_rail_requests_total{${ns},rail="BREB",operation="dispatch",outcome="ok"}`, values: '0+90x32' },
          { series: `wallet_rail_requests_total{${ns},rail="ACH",operation="dispatch",outcome="error"}`, values: '0+1x32' },
          { series: `wallet_rail_requests_total{${ns},rail="ACH",operation="dispatch",outcome="ok"}`, values: '0+99x32' },
        ],
        alert_rule_test: [
          { eval_time: '5m', alertname: 'WalletReconciliationRunFailed', exp_alerts: [{ exp_labels: { ...page, rail: 'ACH', outcome: 'FAILED' } }] },
          { eval_time: '10m', alertname: 'WalletOutboxLag', exp_alerts: [{ exp_labels: { ...ticket, schema: 'transfer' } }] },
          { eval_time: '15m', alertname: 'WalletConsumerLag', exp_alerts: [{ exp_labels: { ...ticket, stream: 'TRANSFERS', consumer: 'webhook' } }] },
          { eval_time: '15m', alertname: 'WalletWebhookBacklog', exp_alerts: [{ exp_labels: ticket }] },
          { eval_time: '20m', alertname: 'WalletRailErrorRate', exp_alerts: [{ exp_labels: { ...ticket, rail: 'BREB', operation: 'dispatch' } }] },
          { eval_time: '20m', alertname: 'WalletMoneyExceptionOpen', exp_alerts: [] },
          { eval_time: '20m', alertname: 'WalletLedgerCheckNotRunning', exp_alerts: [] },
        ],
      },
    ];
    writeFileSync(join(work, 'tests.yaml'), stringify({ rule_files: ['bare-rules.yaml'], evaluation_interval: '1m', tests }));
    const r = spawnSync(PROMTOOL!, ['test', 'rules', 'tests.yaml'], { cwd: work, encoding: 'utf8' });
    expect({ status: r.status, out: r.stdout + r.stderr }).toEqual({ status: 0, out: expect.stringContaining('SUCCESS') });
    // Not vacuous: the same tests fail against rules whose thresholds were loosened.
    writeFileSync(join(work, 'bare-rules.yaml'), stringify(bare).replace('> 900', '> 90000'));
    const loosened = spawnSync(PROMTOOL!, ['test', 'rules', 'tests.yaml'], { cwd: work, encoding: 'utf8' });
    expect(loosened.status).not.toBe(0);
    expect(loosened.stdout + loosened.stderr).toMatch(/WalletSagaStuck/);
  });
});

describe('ledger-check CronJob', () => {
  it('runs the invariants CLI from the ledger image on the schedule and pushes to the Pushgateway', () => {
    const crons = production.filter((m) => m.kind === 'CronJob');
    expect(crons.map((c) => c.metadata.name)).toEqual(['rel-wallet-ledger-check', 'rel-wallet-ledger-check-full']);
    const cron = crons[0]!;
    expect(cron.spec).toMatchObject({ schedule: '*/15 * * * *', timeZone: 'America/Bogota', concurrencyPolicy: 'Forbid' });
    expect(cron.spec.jobTemplate.spec.backoffLimit).toBe(0);
    const pod = cron.spec.jobTemplate.spec.template.spec;
    const [c] = pod.containers;
    expect(c.image).toBe('registry.example.co/payments-wallet/ledger:0.1.0');
    // every 15 minutes the journal since the ledger's verified cut (docs/ledger-check.md)
    expect([c.workingDir, ...c.command]).toEqual([
      '/app/services/invariants',
      'node',
      'dist/cli/check.js',
      '--rail',
      'none',
      '--owed-horizon',
      '900',
      '--incremental',
    ]);
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
    expect(env).toMatchObject({
      INVARIANTS_PUSHGATEWAY_URL: 'http://prometheus-pushgateway.monitoring:9091',
      INVARIANTS_PUSHGATEWAY_JOB: 'rel-wallet-ledger-check',
      INVARIANTS_DATABASE_URL: { secretKeyRef: { name: 'wallet-ledger-check', key: 'DATABASE_URL' } },
    });
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    // and nightly the whole journal, pushed as its own job (an incremental run never overwrites what it found)
    const full = crons[1]!;
    expect(full.spec).toMatchObject({ schedule: '30 3 * * *', timeZone: 'America/Bogota', concurrencyPolicy: 'Forbid' });
    expect(full.spec.jobTemplate.spec.activeDeadlineSeconds).toBe(3600);
    const [fc] = full.spec.jobTemplate.spec.template.spec.containers;
    expect(fc.command).toEqual(['node', 'dist/cli/check.js', '--rail', 'none', '--owed-horizon', '900']);
    expect(fc.env.find((e: any) => e.name === 'INVARIANTS_PUSHGATEWAY_JOB').value).toBe('rel-wallet-ledger-check-full');
    // The alerts select the jobs the CronJobs push as.
    expect(rules.find((r) => r.alert === 'WalletLedgerInvariantViolated')!.expr).toContain('job=~"rel-wallet-ledger-check|rel-wallet-ledger-check-full"');
    // The ledger image carries the CLI at that path.
    const dockerfile = readFileSync(join(REPO, 'deploy', 'docker', 'ledger.Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/COPY --from=build \/repo\/services\/invariants\/dist services\/invariants\/dist/);
    expect(dockerfile).toMatch(/npm ci --omit=dev[^\n]*-w @wallet\/invariants/);
    // Its NetworkPolicy opens Postgres and the Pushgateway, nothing else but DNS.
    const np = production.find((m) => m.kind === 'NetworkPolicy' && m.metadata.name === 'rel-wallet-ledger-check')!;
    expect(np.spec.egress.map((e: any) => e.ports.map((p: any) => p.port))).toEqual([[53, 53], [5432], [9091]]);
  });

  it('refuses to render without a Pushgateway, and makes its own Secret from ledgerCheck.database.databaseUrl', () => {
    expect(() => render([...MESH_ISSUER, '--set', 'ledgerCheck.enabled=true'])).toThrow(/ledgerCheck.pushgatewayUrl/);
    const ms = render([
      ...MESH_ISSUER,
      '--set',
      'ledgerCheck.enabled=true',
      '--set',
      'ledgerCheck.pushgatewayUrl=http://pgw:9091',
      '--set',
      'ledgerCheck.database.databaseUrl=postgresql://checker@pg/wallet',
    ]);
    const secret = ms.find((m) => m.kind === 'Secret' && m.metadata.name === 'rel-wallet-ledger-check-secrets') as any;
    expect(secret.stringData).toEqual({ DATABASE_URL: 'postgresql://checker@pg/wallet' });
    const cron = ms.find((m) => m.kind === 'CronJob')!;
    const env = cron.spec.jobTemplate.spec.template.spec.containers[0].env;
    expect(env.find((e: any) => e.name === 'INVARIANTS_DATABASE_URL').valueFrom.secretKeyRef.name).toBe('rel-wallet-ledger-check-secrets');
  });
});
