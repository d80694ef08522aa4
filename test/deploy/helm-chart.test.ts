// The Helm chart (helm/wallet), rendered by a real helm with the default and the production values:
// lint --strict, every manifest validated against the Kubernetes schemas (kubernetes-models), the
// mesh Certificates against cert-manager's CRD (@kubernetes-models/cert-manager), the ServiceMonitor
// (a CRD) against a small schema of its own, and assertions on what matters.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BlockList, isIP, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { CHART, REPO, helm, helmBinary } from './support/helm.js';
import { prometheusRuleSchema } from './support/prometheus-rule.js';

type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
};

const PROCESSES = ['gateway', 'ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'reconciliation', 'sandbox'];
const STATELESS = PROCESSES.filter((p) => p !== 'sandbox');
const PRODUCTION = join(CHART, 'values-production.yaml');

/**
 * The default values render certificates of the gRPC mesh through cert-manager, which needs an
 * issuer named (mesh.certificates.issuerRef.name): the renders of the default values name one; the
 * production values name their own. `renderExactly` adds nothing.
 */
const MESH_ISSUER = ['--set', 'mesh.certificates.issuerRef.name=wallet-mesh-ca'];

function render(args: string[] = []): Manifest[] {
  return renderExactly(args.includes(PRODUCTION) ? args : [...MESH_ISSUER, ...args]);
}

function renderExactly(args: string[]): Manifest[] {
  const out = helm(['template', 'rel', CHART, '--namespace', 'wallet', ...args]);
  return parseAllDocuments(out)
    .map((d) => {
      if (d.errors.length) throw d.errors[0];
      return d.toJSON() as Manifest;
    })
    .filter((m) => m);
}

const ofKind = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
const component = (m: Manifest) => m.metadata.labels?.['app.kubernetes.io/component'] ?? m.spec?.template?.metadata?.labels?.['app.kubernetes.io/component'];
const byComponent = (ms: Manifest[], kind: string, name: string) => ofKind(ms, kind).find((m) => component(m) === name);

/**
 * kubernetes-models class for an apiVersion/kind, e.g. apps/v1 Deployment → kubernetes-models/apps/v1/Deployment;
 * cert-manager's CRDs (the mesh Certificates) from @kubernetes-models/cert-manager.
 */
async function modelFor(apiVersion: string, kind: string): Promise<(new (d: unknown) => { validate(): void }) | undefined> {
  const path = apiVersion.includes('/') ? apiVersion : `v1`;
  const pkg = apiVersion.startsWith('cert-manager.io/') ? '@kubernetes-models/cert-manager' : 'kubernetes-models';
  try {
    const mod = await import(`${pkg}/${path}/${kind}`);
    return mod[kind];
  } catch {
    return undefined;
  }
}

/** The Prometheus Operator CRD is not in the Kubernetes schemas: its shape is checked here. */
const serviceMonitorSchema = z
  .object({
    apiVersion: z.literal('monitoring.coreos.com/v1'),
    kind: z.literal('ServiceMonitor'),
    metadata: z.object({ name: z.string().min(1), labels: z.record(z.string(), z.string()).optional() }),
    spec: z
      .object({
        selector: z.object({
          matchLabels: z.record(z.string(), z.string()).optional(),
          matchExpressions: z
            .array(z.object({ key: z.string(), operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']), values: z.array(z.string()).optional() }))
            .optional(),
        }),
        namespaceSelector: z.object({ matchNames: z.array(z.string()).optional(), any: z.boolean().optional() }).optional(),
        endpoints: z
          .array(
            z
              .object({
                port: z.string(),
                path: z.string().startsWith('/'),
                interval: z.string().regex(/^\d+(ms|s|m|h)$/),
                scheme: z.enum(['http', 'https']).optional(),
              })
              .strict(),
          )
          .min(1),
      })
      .strict(),
  })
  .strict();

async function validateAll(ms: Manifest[]): Promise<string[]> {
  const problems: string[] = [];
  for (const m of ms) {
    if (m.kind === 'ServiceMonitor') {
      const r = serviceMonitorSchema.safeParse(m);
      if (!r.success) problems.push(`ServiceMonitor ${m.metadata.name}: ${r.error.message}`);
      continue;
    }
    if (m.kind === 'PrometheusRule') {
      const r = prometheusRuleSchema.safeParse(m);
      if (!r.success) problems.push(`PrometheusRule ${m.metadata.name}: ${r.error.message}`);
      continue;
    }
    const Model = await modelFor(m.apiVersion, m.kind);
    if (!Model) {
      problems.push(`no schema for ${m.apiVersion} ${m.kind}`);
      continue;
    }
    try {
      new Model(m).validate();
    } catch (err) {
      problems.push(`${m.kind} ${m.metadata.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

let defaults: Manifest[];
let production: Manifest[];

beforeAll(() => {
  const { fetchedMs } = helmBinary();
  if (fetchedMs !== null) process.stdout.write(`[helm] fetched helm into .tools/helm in ${fetchedMs} ms\n`);
  defaults = render();
  production = render(['-f', PRODUCTION]);
}, 240_000);

describe('helm chart', () => {
  it('passes helm lint --strict with the default and the production values', () => {
    expect(helm(['lint', '--strict', CHART, ...MESH_ISSUER])).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(helm(['lint', '--strict', CHART, '--set', 'mesh.certificates.mode=existingSecrets'])).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(helm(['lint', '--strict', CHART, '-f', PRODUCTION])).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('renders manifests that the Kubernetes schemas accept (default and production values)', async () => {
    expect(defaults.length).toBeGreaterThan(40);
    expect(await validateAll(defaults)).toEqual([]);
    expect(await validateAll(production)).toEqual([]);
    // The validation is not vacuous: a wrong type is caught.
    const broken = structuredClone(ofKind(defaults, 'Deployment')[0]!);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    expect(await validateAll([broken])).toHaveLength(1);
    const badMonitor = structuredClone(ofKind(production, 'ServiceMonitor')[0]!);
    badMonitor.spec.endpoints[0].interval = 'often';
    expect(await validateAll([badMonitor])).toHaveLength(1);
  });

  it('installs every process with the sandbox by default, and no sandbox with the production values', () => {
    expect(ofKind(defaults, 'Deployment').map(component).sort()).toEqual([...PROCESSES].sort());
    const peers = (s: Manifest) => s.metadata.labels?.['wallet/service-role'] === 'grpc-peers';
    expect(
      ofKind(defaults, 'Service')
        .filter((s) => !peers(s))
        .map(component)
        .sort(),
    ).toEqual([...PROCESSES].sort());
    // Every gRPC process also has a headless peers Service (clients balance over its pods).
    const headless = ofKind(defaults, 'Service').filter(peers);
    expect(headless.map(component).sort()).toEqual(PROCESSES.filter((p) => !['gateway', 'sandbox'].includes(p)).sort());
    for (const s of headless)
      expect([s.metadata.name, s.spec.clusterIP, s.spec.ports.map((p: any) => p.name)]).toEqual([`rel-wallet-${component(s)}-grpc`, 'None', ['grpc']]);
    expect(ofKind(production, 'Deployment').map(component).sort()).toEqual([...STATELESS].sort());
    expect(production.filter((m) => component(m) === 'sandbox' || JSON.stringify(m).includes('sandbox:8090'))).toEqual([]);
  });

  it('gives every Deployment startup/liveness/readiness probes on /healthz and /readyz, resources and a locked-down security context', () => {
    for (const ms of [defaults, production]) {
      for (const d of ofKind(ms, 'Deployment')) {
        const pod = d.spec.template.spec;
        expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
        expect(pod.automountServiceAccountToken).toBe(false);
        for (const c of pod.containers) {
          const where = `${d.metadata.name}/${c.name}`;
          expect([where, c.startupProbe?.httpGet?.path]).toEqual([where, '/healthz']);
          expect([where, c.livenessProbe?.httpGet?.path]).toEqual([where, '/healthz']);
          expect([where, c.readinessProbe?.httpGet?.path]).toEqual([where, '/readyz']);
          const probePort = c.readinessProbe.httpGet.port;
          expect(c.ports.map((p: { name: string }) => p.name)).toContain(probePort);
          expect(c.resources.requests.cpu).toBeDefined();
          expect(c.resources.requests.memory).toBeDefined();
          expect(c.resources.limits.memory).toBeDefined();
          expect(c.securityContext).toMatchObject({
            runAsNonRoot: true,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          });
          expect(c.volumeMounts).toEqual(expect.arrayContaining([expect.objectContaining({ mountPath: '/tmp' })]));
        }
      }
    }
    // Services use their ops port; the sandbox answers on its HTTP port.
    const ledger = byComponent(defaults, 'Deployment', 'ledger')!.spec.template.spec.containers[0];
    expect(ledger.ports).toEqual(
      expect.arrayContaining([
        { name: 'ops', containerPort: 9101, protocol: 'TCP' },
        { name: 'grpc', containerPort: 50051, protocol: 'TCP' },
      ]),
    );
    expect(byComponent(defaults, 'Deployment', 'sandbox')!.spec.template.spec.containers[0].readinessProbe.httpGet.port).toBe('http');
  });

  it("runs the images `npm run test:images` builds and runs (test/images/names.mjs), and the production registry's", async () => {
    const { chartImage } = await import(join(REPO, 'test', 'images', 'names.mjs'));
    // A Deployment's process is its component; a migration Job's, the end of its name (…-migrate-<process>).
    const processOf = (m: Manifest) => (m.kind === 'Job' ? m.metadata.name.replace(/^.*-migrate-/, '') : component(m));
    const images = (ms: Manifest[], kind: string) =>
      ofKind(ms, kind).flatMap((m) => m.spec.template.spec.containers.map((c: { image: string }) => [processOf(m), c.image]));
    for (const kind of ['Deployment', 'Job']) {
      const rendered = images(defaults, kind);
      expect(rendered.length).toBeGreaterThan(0);
      for (const [name, image] of rendered) expect([name, image]).toEqual([name, chartImage(name)]);
      for (const [name, image] of images(production, kind)) expect([name, image]).toEqual([name, `registry.example.co/payments-wallet/${name}:0.1.0`]);
    }
  });

  it('runs the migrations as a pre-install/pre-upgrade hook Job per process, non-root', () => {
    for (const ms of [defaults, production]) {
      const jobs = ofKind(ms, 'Job');
      expect(jobs.length).toBe(ofKind(ms, 'Deployment').length);
      for (const j of jobs) {
        expect(j.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
        const c = j.spec.template.spec.containers[0];
        expect(c.command).toEqual(['node', 'dist/cli/migrate.js']);
        expect(c.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true });
        expect(c.env.map((e: { name: string }) => e.name)).toContain('DATABASE_URL');
      }
    }
    // The processes do not migrate by themselves when the Job does.
    const cm = byComponent(defaults, 'ConfigMap', 'transfer')!;
    expect(cm.data!.TRANSFER_MIGRATE_ON_START).toBe('false');
    // Secrets the Job reads exist before it runs (hooks of a lower weight).
    for (const s of ofKind(defaults, 'Secret')) {
      expect(s.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
      expect(Number(s.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(0);
    }
  });

  it('has an HPA for every stateless process (but the reconciliation: fixed replicas) and a PodDisruptionBudget for each', () => {
    // A reconciliation run is one CPU-bound sort, serialised by a lock: more pods would not make it faster.
    const scaled = STATELESS.filter((p) => p !== 'reconciliation');
    expect(
      ofKind(defaults, 'HorizontalPodAutoscaler')
        .map((h) => h.spec.scaleTargetRef.name)
        .sort(),
    ).toEqual(scaled.map((p) => `rel-wallet-${p}`).sort());
    expect(ofKind(production, 'HorizontalPodAutoscaler')).toHaveLength(scaled.length);
    expect(ofKind(production, 'PodDisruptionBudget').map(component).sort()).toEqual([...STATELESS].sort());
    // A Deployment under an HPA leaves replicas to it.
    expect(byComponent(defaults, 'Deployment', 'gateway')!.spec.replicas).toBeUndefined();
    expect(byComponent(defaults, 'Deployment', 'sandbox')!.spec.replicas).toBe(1);
    for (const ms of [defaults, production]) expect(byComponent(ms, 'Deployment', 'reconciliation')!.spec.replicas).toBe(2);
    expect(byComponent(production, 'PodDisruptionBudget', 'reconciliation')!.spec.maxUnavailable).toBe(1);
    // Its HPA can still be switched on.
    expect(byComponent(render(['--set', 'reconciliation.autoscaling.enabled=true']), 'HorizontalPodAutoscaler', 'reconciliation')).toBeDefined();
  });

  it('exposes only the gateway: one Ingress, to the gateway', () => {
    expect(ofKind(defaults, 'Ingress')).toEqual([]);
    const ingresses = ofKind(production, 'Ingress');
    expect(ingresses).toHaveLength(1);
    const backends = ingresses[0]!.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.backend.service.name));
    expect(new Set(backends)).toEqual(new Set(['rel-wallet-gateway']));
    for (const s of [...ofKind(defaults, 'Service'), ...ofKind(production, 'Service')]) {
      expect([s.metadata.name, s.spec.type]).toEqual([s.metadata.name, 'ClusterIP']);
    }
  });

  it("puts the gateway's admin listener on its own port, never behind the Ingress nor on a public Service", () => {
    for (const ms of [defaults, production]) {
      const container = byComponent(ms, 'Deployment', 'gateway')!.spec.template.spec.containers[0];
      expect(container.ports).toEqual(
        expect.arrayContaining([
          { name: 'admin', containerPort: 8081, protocol: 'TCP' },
          { name: 'http', containerPort: 8080, protocol: 'TCP' },
        ]),
      );
      expect(byComponent(ms, 'ConfigMap', 'gateway')!.data!.GATEWAY_ADMIN_PORT).toBe('8081');
      const svc = byComponent(ms, 'Service', 'gateway')!;
      expect(svc.spec.type).toBe('ClusterIP');
      expect(svc.spec.ports).toEqual(expect.arrayContaining([{ name: 'admin', port: 8081, targetPort: 'admin', protocol: 'TCP' }]));
    }
    // The Ingress has no path to the admin port: every backend is the gateway's `http` port.
    const [ingress] = ofKind(production, 'Ingress');
    const ports = ingress!.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.backend.service.port));
    expect(ports.length).toBeGreaterThan(0);
    for (const port of ports) expect(port).toEqual({ name: 'http' });
    const withAdminHost = render(['-f', PRODUCTION, '--set', 'ingress.hosts[0].host=admin.wallet.example.co', '--set', 'ingress.hosts[0].paths[0]=/admin']);
    expect(JSON.stringify(ofKind(withAdminHost, 'Ingress'))).not.toMatch(/"admin"|8081/);
    // A LoadBalancer gateway does not publish the admin port: it moves to a ClusterIP Service of its own.
    const lb = render(['--set', 'gateway.service.type=LoadBalancer']);
    const publicSvc = byComponent(lb, 'Service', 'gateway')!;
    expect(publicSvc.spec.type).toBe('LoadBalancer');
    expect(publicSvc.spec.ports.map((p: any) => p.name)).not.toContain('admin');
    const adminSvc = byComponent(lb, 'Service', 'gateway-admin')!;
    expect(adminSvc.spec).toMatchObject({ type: 'ClusterIP', ports: [{ name: 'admin', port: 8081, targetPort: 'admin', protocol: 'TCP' }] });
    expect(adminSvc.spec.selector['app.kubernetes.io/component']).toBe('gateway');
    // NetworkPolicy: nobody reaches the admin port by default; in production only the listed peers.
    const adminRules = (ms: Manifest[]) =>
      byComponent(ms, 'NetworkPolicy', 'gateway')!.spec.ingress.filter((r: any) => r.ports.some((p: any) => p.port === 8081));
    expect(adminRules(defaults)).toEqual([]);
    const prodRules = adminRules(production);
    expect(prodRules).toHaveLength(1);
    expect(prodRules[0].from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ops-bastion' } } }]);
    // The public port's rules never open the admin port.
    for (const r of byComponent(production, 'NetworkPolicy', 'gateway')!.spec.ingress) {
      if (r.ports.some((p: any) => p.port === 8080)) expect(r.ports.map((p: any) => p.port)).not.toContain(8081);
    }
  });

  it('has a default-deny NetworkPolicy and one per process that opens only what it needs', () => {
    for (const ms of [defaults, production]) {
      const policies = ofKind(ms, 'NetworkPolicy');
      const deny = policies.find((p) => p.metadata.name.endsWith('-default-deny'))!;
      expect(deny.spec).toEqual({
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'wallet', 'app.kubernetes.io/instance': 'rel' } },
        policyTypes: ['Ingress', 'Egress'],
      });
      for (const d of ofKind(ms, 'Deployment')) {
        const np = byComponent(ms, 'NetworkPolicy', component(d)!);
        expect([component(d), np?.spec.policyTypes]).toEqual([component(d), ['Ingress', 'Egress']]);
      }
    }
    const np = (name: string, ms = defaults) => byComponent(ms, 'NetworkPolicy', name)!.spec;
    const fromComponents = (rule: any) => (rule.from ?? []).map((f: any) => f.podSelector?.matchLabels?.['app.kubernetes.io/component']);
    const egressPorts = (spec: any) => spec.egress.flatMap((r: any) => r.ports.map((p: any) => p.port));
    // Only the gateway's main port is open to the outside (no `from`: the ingress controller); in production only from the ingress namespace.
    const gatewayPublic = np('gateway').ingress.find((r: any) => r.ports[0].port === 8080 && !r.from);
    expect(gatewayPublic).toBeDefined();
    expect(np('gateway', production).ingress.find((r: any) => r.ports[0].port === 8080).from[0].namespaceSelector).toBeDefined();
    for (const svc of ['ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'reconciliation']) {
      const grpc = np(svc).ingress.filter((r: any) => r.ports[0].port >= 50051 && r.ports[0].port <= 50057);
      expect(grpc).toHaveLength(1);
      expect(grpc[0].from.length).toBeGreaterThan(0); // never open to everyone
    }
    expect(fromComponents(np('ledger').ingress[0]).sort()).toEqual(['collect-key', 'gateway', 'pse-deposit', 'reconciliation', 'transfer']);
    expect(fromComponents(np('receipt').ingress[0])).toEqual(['gateway']);
    // The reconciliation reads transfer's, pse-deposit's and collect-key's settled records: their gRPC port admits it (and the gateway).
    for (const svc of ['transfer', 'pse-deposit']) {
      expect([svc, fromComponents(np(svc).ingress[0]).sort()]).toEqual([svc, ['gateway', 'reconciliation']]);
    }
    // collect-key also admits pse-deposit (a cobro's dynamic key, docs/cobros.md), and pse-deposit may reach it.
    expect(fromComponents(np('collect-key').ingress[0]).sort()).toEqual(['gateway', 'pse-deposit', 'reconciliation']);
    expect(egressPorts(np('pse-deposit'))).toContain(50054);
    // Nothing else admits it: not the receipt, the webhook service, nor the gateway.
    for (const svc of ['receipt', 'webhook', 'gateway']) {
      expect([svc, np(svc).ingress.flatMap(fromComponents)]).toEqual([svc, expect.not.arrayContaining(['reconciliation'])]);
    }
    // Its own gRPC port: from the gateway only (the admin API); its ops port from the scraper.
    expect(np('reconciliation').ingress.map((r: any) => [r.ports.map((p: any) => p.port), fromComponents(r)])).toEqual([
      [[50057], ['gateway']],
      [[9107], []],
    ]);
    // Egress: the gateway reaches Postgres, Redis, the services, NATS (its outbox) and SMTP (its mail: docs/security.md "The company is told"); the receipt service no ledger.
    expect(egressPorts(np('gateway'))).toEqual(expect.arrayContaining([53, 5432, 6379, 50051, 50052, 50053, 50054, 50055, 50056, 50057, 4222, 2525]));
    expect(egressPorts(np('gateway', production))).toEqual(expect.arrayContaining([4222, 587]));
    expect(egressPorts(np('gateway', production))).not.toContain(2525);
    // The sandbox's SMTP sink admits the processes that send mail, no other.
    expect(
      np('sandbox')
        .ingress.filter((r: any) => r.ports[0].port === 2525)
        .flatMap(fromComponents)
        .sort(),
    ).toEqual(['gateway', 'pse-deposit']);
    expect(egressPorts(np('receipt')).sort()).toEqual([4222, 5432, 53, 53].sort());
    expect(egressPorts(np('transfer'))).toEqual(expect.arrayContaining([4222, 5432, 50051, 8090]));
    expect(egressPorts(np('pse-deposit'))).toEqual(expect.arrayContaining([2525, 8090]));
    expect(egressPorts(np('sandbox'))).toEqual(expect.arrayContaining([5432, 8080]));
    // Without the sandbox, providers are reached on 443 only; the webhook service reaches the internet but no private range.
    expect(egressPorts(np('transfer', production))).toContain(443);
    expect(egressPorts(np('transfer', production))).not.toContain(8090);
    const webhookOut = np('webhook', production).egress.find((r: any) => r.to?.[0]?.ipBlock?.cidr === '0.0.0.0/0');
    expect(webhookOut.to[0].ipBlock.except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
    // Only the webhook service may reach arbitrary internet addresses.
    const toInternet = (ms: Manifest[]) =>
      ofKind(ms, 'NetworkPolicy')
        .filter((p) => (p.spec.egress ?? []).some((r: any) => (r.to ?? []).some((t: any) => t.ipBlock?.cidr === '0.0.0.0/0')))
        .map(component);
    expect(toInternet(production)).toEqual(['webhook']);
    expect(toInternet(defaults)).toEqual(['webhook']);
    // The reconciliation reaches exactly: DNS, Postgres, NATS, the four services it calls, and the
    // providers' reports (the sandbox here; in production the configured report servers on 443).
    const egressTo = (spec: any) =>
      spec.egress.map((r: any) => [
        r.ports.map((p: any) => p.port),
        (r.to ?? []).map(
          (t: any) =>
            t.podSelector?.matchLabels?.['app.kubernetes.io/component'] ??
            t.ipBlock?.cidr ??
            t.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] ??
            'kube-dns',
        ),
      ]);
    expect(egressTo(np('reconciliation'))).toEqual([
      [[53, 53], ['kube-dns']],
      [[5432], []],
      [[4222], []],
      [[50054], ['collect-key']],
      [[50051], ['ledger']],
      [[50053], ['pse-deposit']],
      [[50052], ['transfer']],
      [[8090], ['sandbox']],
    ]);
    expect(fromComponents(np('sandbox').ingress[0]).sort()).toEqual(['collect-key', 'pse-deposit', 'reconciliation', 'transfer']);
    expect(egressTo(np('reconciliation', production))).toEqual([
      [[53, 53], ['kube-dns']],
      [[5432], ['10.20.0.0/24']],
      [[4222], ['nats']],
      [[50054], ['collect-key']],
      [[50051], ['ledger']],
      [[50053], ['pse-deposit']],
      [[50052], ['transfer']],
      [[443], ['198.51.100.0/24']],
      [[4318], []],
    ]);
    // Without peers named, the report download may go to any destination, on the listed ports only.
    const open = render(['-f', PRODUCTION, '--set', 'reconciliation.reports.egressTo=null', '--set', 'reconciliation.reports.egressPorts={443,8443}']);
    expect(egressTo(np('reconciliation', open)).slice(7, 8)).toEqual([[[443, 8443], []]]);
    // A report URL of its own with the sandbox on: that egress, not the sandbox.
    const own = render([
      '--set',
      'reconciliation.reports.url=https://reports.example.co/r',
      '--set',
      'reconciliation.reports.egressTo[0].ipBlock.cidr=203.0.113.0/24',
    ]);
    expect(egressTo(np('reconciliation', own)).at(-1)).toEqual([[443], ['203.0.113.0/24']]);
    expect(fromComponents(np('sandbox', own).ingress[0])).toContain('reconciliation'); // the sandbox's callers are fixed facts
    // Production pins the data stores' destinations.
    expect(np('ledger', production).egress.find((r: any) => r.ports[0].port === 5432).to).toBeDefined();
  });

  it('keeps secrets out of ConfigMaps', () => {
    const secretKey = /(TOKEN|PASSWORD|PASSPHRASE|SECRET|PEPPER|PRIVATE|CREDENTIAL|DATABASE_URL|REDIS_URL|SMTP_URL)/i;
    const credentialsInUrl = /:\/\/[^/\s:@]+:[^/\s@]+@/;
    for (const ms of [defaults, production, render(['--set', 'secrets.database.databaseUrl=postgresql://u:p4ss@db/wallet'])]) {
      for (const cm of ofKind(ms, 'ConfigMap')) {
        for (const [k, v] of Object.entries(cm.data ?? {})) {
          expect([cm.metadata.name, k, secretKey.test(k)]).toEqual([cm.metadata.name, k, false]);
          expect([cm.metadata.name, k, credentialsInUrl.test(v)]).toEqual([cm.metadata.name, k, false]);
        }
      }
      // The secret variables reach the pods through secretKeyRef only; `*_FILE` variables (the
      // caller-context keys) name a file in a read-only Secret volume of the same pod instead.
      for (const d of ofKind(ms, 'Deployment')) {
        const pod = d.spec.template.spec;
        for (const e of pod.containers[0].env ?? []) {
          if (!secretKey.test(e.name)) continue;
          if (e.name.endsWith('_FILE')) {
            const mount = pod.containers[0].volumeMounts.find((m: any) => e.value.startsWith(`${m.mountPath}/`));
            const volume = pod.volumes.find((v: any) => v.name === mount?.name);
            expect([e.name, mount?.readOnly, volume?.secret?.secretName]).toEqual([e.name, true, expect.any(String)]);
          } else {
            expect([e.name, e.valueFrom?.secretKeyRef?.key]).toEqual([e.name, expect.any(String)]);
          }
        }
      }
    }
    // The checker is not blind: a secret put in a ConfigMap through `env` is caught.
    const leaky = render(['--set', 'gateway.env.ADMIN_TOKEN=oops-in-a-configmap']);
    expect(Object.keys(byComponent(leaky, 'ConfigMap', 'gateway')!.data!).some((k) => secretKey.test(k))).toBe(true);
  });

  it('one database Secret per process (issue 36): the processes connect as their own role, the migration Jobs as the migrations role', () => {
    const ms = render([
      '--set',
      'secrets.database.databaseUrl=postgresql://wallet_migrator@pg/w',
      '--set',
      'secrets.databases.ledger.databaseUrl=postgresql://wallet_ledger@pg/w',
      '--set',
      'secrets.databases.gateway.existingSecret=gw-db',
    ]);
    const dbRef = (kind: string, name: string) => {
      const pod =
        kind === 'Job'
          ? ofKind(ms, 'Job').find((j: any) => j.spec.template.metadata.labels['wallet.example.co/migrates'] === name)!.spec.template.spec
          : byComponent(ms, 'Deployment', name)!.spec.template.spec;
      return pod.containers[0].env.find((e: any) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef.name;
    };
    expect(dbRef('Deployment', 'ledger')).toBe('rel-wallet-db-ledger-secrets');
    expect(dbRef('Deployment', 'gateway')).toBe('gw-db');
    expect(dbRef('Deployment', 'transfer')).toBe('rel-wallet-db-transfer-secrets');
    for (const p of ['ledger', 'gateway', 'transfer']) expect(dbRef('Job', p)).toBe('rel-wallet-database-secrets');
    const secret = (n: string) => ofKind(ms, 'Secret').find((s) => s.metadata.name === n);
    expect(secret('rel-wallet-db-ledger-secrets')!.stringData).toEqual({ DATABASE_URL: 'postgresql://wallet_ledger@pg/w' });
    // Unset: the migrations role's URL, which a production process refuses at start (it owns the schema).
    expect(secret('rel-wallet-db-transfer-secrets')!.stringData).toEqual({ DATABASE_URL: 'postgresql://wallet_migrator@pg/w' });
    expect(secret('rel-wallet-db-gateway-secrets')).toBeUndefined();
  });

  it('reads credentials from existing Secrets when named, and makes none of its own then', () => {
    const ms = render([
      '--set',
      'secrets.admin.existingSecret=my-admin',
      '--set',
      'secrets.database.existingSecret=my-db',
      '--set',
      'secrets.providers.existingSecret=my-providers',
      '--set',
      'secrets.webhook.existingSecret=my-webhook',
      '--set',
      'secrets.transfer.existingSecret=my-transfer',
      '--set',
      'secrets.reconciliation.existingSecret=my-recon',
      ...['gateway', 'ledger', 'transfer', 'pse-deposit', 'collect-key', 'receipt', 'webhook', 'reconciliation', 'sandbox'].flatMap((p) => [
        '--set',
        `secrets.databases.${p}.existingSecret=db-${p}`,
      ]),
    ]);
    expect(ofKind(ms, 'Secret')).toEqual([]);
    const env = (name: string) =>
      Object.fromEntries(
        byComponent(ms, 'Deployment', name)!
          .spec.template.spec.containers[0].env.filter((e: any) => e.valueFrom)
          .map((e: any) => [e.name, e.valueFrom.secretKeyRef.name]),
      );
    expect(env('gateway')).toEqual({
      ADMIN_TOKEN: 'my-admin',
      API_KEY_PEPPER: 'my-admin',
      GATEWAY_ENCRYPTION_KEY: 'my-admin',
      DATABASE_URL: 'db-gateway',
      REDIS_URL: 'my-db',
      SMTP_URL: 'my-providers',
    });
    expect(env('transfer')).toEqual({ DATABASE_URL: 'db-transfer', RAIL_CALLBACK_SECRET: 'my-providers', TRANSFER_DATA_KEY: 'my-transfer' });
    expect(env('pse-deposit')).toEqual({ DATABASE_URL: 'db-pse-deposit', PSE_CALLBACK_SECRET: 'my-providers', SMTP_URL: 'my-providers' });
    expect(env('collect-key')).toEqual({ DATABASE_URL: 'db-collect-key', BREB_CALLBACK_SECRET: 'my-providers' });
    expect(env('webhook')).toEqual({ DATABASE_URL: 'db-webhook', WEBHOOK_SECRET_KEY: 'my-webhook' });
    expect(env('sandbox')).toEqual({ DATABASE_URL: 'db-sandbox', SANDBOX_CALLBACK_SECRET: 'my-providers' });
    expect(env('reconciliation')).toEqual({ DATABASE_URL: 'db-reconciliation', RECON_REPORTS_TOKEN: 'my-recon' });
    // One switch at a time: only that group's Secret disappears.
    const some = render(['--set', 'secrets.admin.existingSecret=my-admin', '--set', 'secrets.admin.adminToken=ignored-when-existing']);
    expect(
      ofKind(some, 'Secret')
        .map((s) => s.metadata.name)
        .filter((n) => !n.startsWith('rel-wallet-db-'))
        .sort(),
    ).toEqual([
      'rel-wallet-database-secrets',
      'rel-wallet-providers-secrets',
      'rel-wallet-reconciliation-secrets',
      'rel-wallet-transfer-secrets',
      'rel-wallet-webhook-secrets',
    ]);
    // Chart-made: the values land in the Secret, not elsewhere.
    const made = render(['--set', 'secrets.admin.adminToken=a-very-long-admin-token']);
    expect(ofKind(made, 'Secret').find((s) => s.metadata.name === 'rel-wallet-admin-secrets')!.stringData).toEqual({ ADMIN_TOKEN: 'a-very-long-admin-token' });
    expect(made.filter((m) => m.kind !== 'Secret' && JSON.stringify(m).includes('a-very-long-admin-token'))).toEqual([]);
    // The report token: in its Secret only, reaching the reconciliation through a secretKeyRef.
    const token = render(['--set', 'secrets.reconciliation.reportsToken=report-bearer-token-1234']);
    expect(ofKind(token, 'Secret').find((s) => s.metadata.name === 'rel-wallet-reconciliation-secrets')!.stringData).toEqual({
      RECON_REPORTS_TOKEN: 'report-bearer-token-1234',
    });
    expect(token.filter((m) => m.kind !== 'Secret' && JSON.stringify(m).includes('report-bearer-token-1234'))).toEqual([]);
  });

  it("signs receipts with the operator's PKCS#12: its Secret mounted read-only into the receipt pods only, the passphrase by secretKeyRef; none → the development key, refused in production", () => {
    const receipt = (ms: Manifest[]) => byComponent(ms, 'Deployment', 'receipt')!.spec.template.spec;
    const job = (ms: Manifest[]) =>
      ofKind(ms, 'Job').find((j) => j.spec.template.metadata.labels['wallet.example.co/migrates'] === 'receipt')!.spec.template.spec;
    const cm = (ms: Manifest[]) => byComponent(ms, 'ConfigMap', 'receipt')!.data!;
    const plain = (ms: Manifest[]) => receipt(ms).containers[0].env.find((e: any) => e.name === 'RECEIPT_SIGNING_P12_FILE')?.value;
    // Production: the Secret of the production values.
    const pod = receipt(production);
    const file = plain(production);
    const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === 'receipt-signing');
    const volume = pod.volumes.find((v: any) => v.name === 'receipt-signing');
    expect(mount).toEqual({ name: 'receipt-signing', mountPath: '/var/run/wallet/receipt-signing', readOnly: true });
    expect(volume.secret).toEqual({
      secretName: 'wallet-receipt-signing',
      defaultMode: 0o440,
      items: [{ key: 'receipt-signing.p12', path: 'receipt-signing.p12' }],
    });
    expect(file).toBe(`${mount.mountPath}/${volume.secret.items[0].path}`);
    const passphrase = (env: any[]) => env.find((e: any) => e.name === 'RECEIPT_SIGNING_P12_PASSPHRASE');
    expect(passphrase(pod.containers[0].env)).toEqual({
      name: 'RECEIPT_SIGNING_P12_PASSPHRASE',
      valueFrom: { secretKeyRef: { name: 'wallet-receipt-signing', key: 'passphrase' } },
    });
    // The migrations Job signs nothing (its config does not ask for the key): neither path, passphrase nor volume.
    expect(JSON.stringify(job(production))).not.toMatch(/receipt-signing|RECEIPT_SIGNING/);
    expect(cm(production).RECEIPT_SIGNING_P12_FILE).toBeUndefined();
    // No other process sees it.
    for (const d of ofKind(production, 'Deployment').filter((x) => component(x) !== 'receipt'))
      expect(JSON.stringify(d)).not.toMatch(/receipt-signing|RECEIPT_SIGNING/);
    // Keys of your own Secret; Reloader also rolls the receipt pods when it changes.
    const own = render([
      '--set',
      'receipt.signing.existingSecret=my-signing',
      '--set',
      'receipt.signing.p12Key=cert.pfx',
      '--set',
      'receipt.signing.passphraseKey=pin',
      '--set',
      'mesh.reloader.enabled=true',
    ]);
    expect(receipt(own).volumes.find((v: any) => v.name === 'receipt-signing').secret.items).toEqual([{ key: 'cert.pfx', path: 'receipt-signing.p12' }]);
    expect(passphrase(receipt(own).containers[0].env).valueFrom.secretKeyRef).toEqual({ name: 'my-signing', key: 'pin' });
    expect(byComponent(own, 'Deployment', 'receipt')!.metadata.annotations!['secret.reloader.stakater.com/reload']).toBe(
      'rel-wallet-mesh-receipt,rel-wallet-caller-context,my-signing',
    );
    // Default values: nothing mounted, the service makes its development key.
    expect(JSON.stringify(receipt(defaults))).not.toMatch(/receipt-signing|RECEIPT_SIGNING/);
    expect(plain(defaults)).toBeUndefined();
    // Production without a key does not render.
    expect(() => renderExactly(['-f', PRODUCTION, '--set', 'receipt.signing.existingSecret='])).toThrow(
      /receipt\.signing\.existingSecret is required with config\.nodeEnv production/,
    );
  });

  it('configures NATS streams with 3 replicas in production and 1 by default', () => {
    const replicas = (ms: Manifest[]) => new Set(ofKind(ms, 'ConfigMap').map((c) => c.data!.NATS_STREAM_REPLICAS));
    expect(replicas(production)).toEqual(new Set(['3']));
    expect(replicas(defaults)).toEqual(new Set(['1']));
    expect(byComponent(production, 'ConfigMap', 'ledger')!.data!.NODE_ENV).toBe('production');
  });

  it('wires each process to the others by Service name and to real providers without the sandbox', () => {
    const gw = byComponent(defaults, 'ConfigMap', 'gateway')!.data!;
    expect(gw).toMatchObject({
      LEDGER_GRPC_ADDR: 'dns:///rel-wallet-ledger-grpc:50051',
      WEBHOOK_GRPC_ADDR: 'dns:///rel-wallet-webhook-grpc:50056',
      GATEWAY_PORT: '8080',
      GATEWAY_OPS_PORT: '9100',
    });
    expect(byComponent(defaults, 'ConfigMap', 'transfer')!.data!.BREB_RAIL_URL).toBe('http://rel-wallet-sandbox:8090');
    expect(byComponent(production, 'ConfigMap', 'transfer')!.data!).toMatchObject({
      BREB_RAIL_URL: 'https://rail.breb.example.co',
      RAIL_CALLBACK_BASE_URL: 'https://api.wallet.example.co/webhooks/rails',
    });
    expect(() => render(['--set', 'sandbox.enabled=false'])).toThrow(/providers\.\w+ is required when the sandbox is off/);
  });

  it("trusts no proxy by default, and in production only the ingress controller's addresses, never a whole private range (issue 36)", () => {
    expect(byComponent(defaults, 'ConfigMap', 'gateway')!.data!.TRUSTED_PROXIES).toBe('');
    const prod = byComponent(production, 'ConfigMap', 'gateway')!.data!.TRUSTED_PROXIES!;
    const entries = prod
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    expect(entries.length).toBeGreaterThan(0);
    const whole = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'];
    for (const entry of entries) {
      const [addr, bits] = entry.split('/') as [string, string | undefined];
      const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
      const list = new BlockList();
      if (bits === undefined) list.addAddress(addr, family);
      else list.addSubnet(addr, Number(bits), family);
      for (const range of whole) {
        const [net, rangeBits] = range.split('/') as [string, string];
        const covers = (isIP(net) === 6 ? 'ipv6' : 'ipv4') === family && bits !== undefined && Number(bits) <= Number(rangeBits) && list.check(net, family);
        expect([entry, range, covers]).toEqual([entry, range, false]);
      }
    }
    // What an SRE sets is what the gateway gets.
    expect(byComponent(render(['--set', 'gateway.trustedProxies=10.1.2.0/28\\,10.1.2.64/28']), 'ConfigMap', 'gateway')!.data!.TRUSTED_PROXIES).toBe(
      '10.1.2.0/28,10.1.2.64/28',
    );
  });

  it("tells the gateway its public base URL (the OpenAPI servers): the value, else the ingress's first host, https with TLS", () => {
    const urlOf = (ms: Manifest[]) => byComponent(ms, 'ConfigMap', 'gateway')!.data!.GATEWAY_PUBLIC_URL;
    expect(urlOf(defaults)).toBeUndefined(); // no ingress: the gateway says '/' and warns at start
    expect(urlOf(production)).toBe('https://api.wallet.example.co');
    expect(urlOf(render(['--set', 'ingress.enabled=true']))).toBe('http://api.wallet.example.co');
    expect(urlOf(render(['-f', PRODUCTION, '--set', 'gateway.publicUrl=https://pagos.example.co/api/']))).toBe('https://pagos.example.co/api');
  });

  it("points the receipts' QR at the gateway's public verification page, unless another address is set", () => {
    const urlOf = (ms: Manifest[]) => byComponent(ms, 'ConfigMap', 'receipt')!.data!.RECEIPT_VERIFY_BASE_URL;
    expect(urlOf(defaults)).toBeUndefined(); // no public URL known: the QR carries the number and the SHA-256
    expect(urlOf(production)).toBe('https://api.wallet.example.co/receipts/verify');
    expect(urlOf(render(['-f', PRODUCTION, '--set', 'gateway.publicUrl=https://pagos.example.co/api/']))).toBe('https://pagos.example.co/api/receipts/verify');
    expect(urlOf(render(['-f', PRODUCTION, '--set', 'receipt.verifyBaseUrl=https://verificar.example.co/r/']))).toBe('https://verificar.example.co/r');
  });

  it("sets only variables the processes read (their config.ts, the platform's base schema)", () => {
    const platform = readFileSync(join(REPO, 'services', 'platform', 'src', 'config', 'config.ts'), 'utf8');
    const dirOf = (name: string) => (name === 'gateway' ? 'gateway' : `services/${name}`);
    // The reconciliation landed in slices: until the reconciliation service's config.ts (and the gateway's
    // RECONCILIATION_GRPC_ADDR) are merged, their variables wait here; once they are, they are checked.
    const reconConfig = join(REPO, 'services', 'reconciliation', 'src', 'config.ts');
    const pending = new Set<string>(
      readFileSync(join(REPO, 'gateway', 'src', 'config.ts'), 'utf8').includes('RECONCILIATION_GRPC_ADDR:') ? [] : ['RECONCILIATION_GRPC_ADDR'],
    );
    for (const cm of ofKind(production.concat(defaults), 'ConfigMap')) {
      const file = join(REPO, dirOf(component(cm)!), 'src', 'config.ts');
      if (file === reconConfig && !existsSync(file)) continue;
      expect(existsSync(file)).toBe(true);
      const source = readFileSync(file, 'utf8') + platform;
      for (const k of Object.keys(cm.data!)) {
        if (k.startsWith('OTEL_') || pending.has(k)) continue;
        expect([cm.metadata.name, k, source.includes(`${k}:`)]).toEqual([cm.metadata.name, k, true]);
      }
    }
    // The plain variables set on the Deployments themselves (the mesh's) are read by the platform's mesh/config.ts.
    const mesh = readFileSync(join(REPO, 'services', 'platform', 'src', 'mesh', 'config.ts'), 'utf8');
    const plainOf = (d: Manifest) => d.spec.template.spec.containers[0].env.filter((e: any) => e.value !== undefined).map((e: any) => e.name as string);
    const plain = ofKind(production.concat(defaults), 'Deployment')
      .filter((d) => component(d) !== 'reconciliation' && component(d) !== 'receipt')
      .flatMap(plainOf);
    expect(new Set(plain)).toEqual(new Set(['MESH_TLS_DIR', 'CALLER_CONTEXT_PUBLIC_KEY_FILE', 'CALLER_CONTEXT_PRIVATE_KEY_FILE']));
    for (const k of new Set(plain)) expect([k, mesh.includes(`env.${k}`)]).toEqual([k, true]);
    // The reconciliation's also name its scratch volume (RECON_WORK_DIR, its config.ts) and its heap (NODE_OPTIONS, Node itself).
    for (const d of ofKind(production.concat(defaults), 'Deployment').filter((x) => component(x) === 'reconciliation')) {
      expect(plainOf(d)).toEqual(['MESH_TLS_DIR', 'CALLER_CONTEXT_PUBLIC_KEY_FILE', 'RECON_WORK_DIR', 'NODE_OPTIONS']);
    }
    if (existsSync(reconConfig)) expect(readFileSync(reconConfig, 'utf8')).toContain('RECON_WORK_DIR:');
    // The receipt's also name its signing key's file in production (RECEIPT_SIGNING_P12_FILE, its config.ts).
    expect(plainOf(byComponent(defaults, 'Deployment', 'receipt')!)).toEqual(['MESH_TLS_DIR', 'CALLER_CONTEXT_PUBLIC_KEY_FILE']);
    expect(plainOf(byComponent(production, 'Deployment', 'receipt')!)).toEqual(['RECEIPT_SIGNING_P12_FILE', 'MESH_TLS_DIR', 'CALLER_CONTEXT_PUBLIC_KEY_FILE']);
    expect(readFileSync(join(REPO, 'services', 'receipt', 'src', 'config.ts'), 'utf8')).toContain('RECEIPT_SIGNING_P12_FILE:');
  });

  it("runs the reconciliation with a scratch emptyDir at RECON_WORK_DIR, a heap derived from its memory limit, and the reports' URL and schedule", () => {
    const container = (ms: Manifest[]) => byComponent(ms, 'Deployment', 'reconciliation')!.spec.template.spec.containers[0];
    const envOf = (ms: Manifest[]) =>
      Object.fromEntries(
        container(ms)
          .env.filter((e: any) => e.value !== undefined)
          .map((e: any) => [e.name, e.value]),
      );
    const volumeOf = (ms: Manifest[], name: string) =>
      byComponent(ms, 'Deployment', 'reconciliation')!.spec.template.spec.volumes.find((v: any) => v.name === name);
    for (const [ms, size, heap] of [
      [defaults, '1Gi', 384],
      [production, '2Gi', 768],
    ] as const) {
      expect(container(ms).volumeMounts).toEqual(expect.arrayContaining([{ name: 'work', mountPath: '/var/tmp/reconciliation' }]));
      expect(volumeOf(ms, 'work')).toEqual({ name: 'work', emptyDir: { sizeLimit: size } });
      expect(envOf(ms)).toMatchObject({ RECON_WORK_DIR: '/var/tmp/reconciliation', NODE_OPTIONS: `--max-old-space-size=${heap}` });
      expect(container(ms).resources.requests['ephemeral-storage']).toBe(size);
      expect(container(ms).ports.map((p: any) => [p.name, p.containerPort])).toEqual([
        ['grpc', 50057],
        ['ops', 9107],
      ]);
      expect(container(ms).readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'ops' });
    }
    // No other process gets a heap cap or a scratch volume.
    for (const d of ofKind(defaults, 'Deployment').filter((x) => component(x) !== 'reconciliation')) {
      expect([component(d), JSON.stringify(d.spec.template.spec).includes('NODE_OPTIONS')]).toEqual([component(d), false]);
    }
    // The heap follows the limit, whatever its unit; anything the chart cannot read stops the render.
    const heapWith = (limit: string, extra: string[] = []) =>
      envOf(render(['--set', `reconciliation.resources.limits.memory=${limit}`, ...extra])).NODE_OPTIONS;
    expect(heapWith('2Gi')).toBe('--max-old-space-size=1536');
    expect(heapWith('1000M')).toBe('--max-old-space-size=714'); // 953 MiB
    expect(heapWith('268435456')).toBe('--max-old-space-size=192');
    expect(heapWith('1Gi', ['--set', 'reconciliation.heapPercent=50'])).toBe('--max-old-space-size=512');
    expect(() => heapWith('1.5Gi')).toThrow(/reconciliation\.resources\.limits\.memory: "1\.5Gi" is not a memory quantity/);
    expect(() => heapWith('64Mi')).toThrow(/leaves a heap of 48 MiB/);
    // Its addresses: the four services it calls through their headless peers Services; the gateway reaches it the same way.
    for (const ms of [defaults, production]) {
      expect(byComponent(ms, 'ConfigMap', 'reconciliation')!.data).toMatchObject({
        RECONCILIATION_GRPC_HOST: '0.0.0.0',
        RECONCILIATION_GRPC_PORT: '50057',
        RECONCILIATION_OPS_PORT: '9107',
        RECONCILIATION_MIGRATE_ON_START: 'false',
        LEDGER_GRPC_ADDR: 'dns:///rel-wallet-ledger-grpc:50051',
        TRANSFER_GRPC_ADDR: 'dns:///rel-wallet-transfer-grpc:50052',
        DEPOSIT_GRPC_ADDR: 'dns:///rel-wallet-pse-deposit-grpc:50053',
        COLLECT_KEY_GRPC_ADDR: 'dns:///rel-wallet-collect-key-grpc:50054',
        RECON_SCHEDULE: '0 6 * * *',
        RECON_TIMEZONE: 'America/Bogota',
      });
      expect(byComponent(ms, 'ConfigMap', 'gateway')!.data!.RECONCILIATION_GRPC_ADDR).toBe('dns:///rel-wallet-reconciliation-grpc:50057');
    }
    // Reports: the sandbox's by default; the provider's in production; required without the sandbox.
    expect(byComponent(defaults, 'ConfigMap', 'reconciliation')!.data!.RECON_REPORTS_URL).toBe('http://rel-wallet-sandbox:8090/sandbox/reports');
    expect(byComponent(production, 'ConfigMap', 'reconciliation')!.data!.RECON_REPORTS_URL).toBe('https://reportes.example.co/settlement-reports');
    expect(() => render(['-f', PRODUCTION, '--set', 'reconciliation.reports.url='])).toThrow(
      /reconciliation\.reports\.url is required when the sandbox is off/,
    );
    // The schedule and the rails are values; "off" leaves runs to the operators.
    const tuned = byComponent(
      render(['--set', 'reconciliation.schedule=off', '--set', 'reconciliation.rails={breb,pse}']),
      'ConfigMap',
      'reconciliation',
    )!.data!;
    expect(tuned).toMatchObject({ RECON_SCHEDULE: 'off', RECON_RAILS: 'breb,pse' });
    expect(byComponent(defaults, 'ConfigMap', 'reconciliation')!.data!.RECON_RAILS).toBeUndefined();
    // Switched off: no object of it, no rule admitting it, and the gateway is still rendered.
    const without = render(['--set', 'reconciliation.enabled=false']);
    expect(without.filter((m) => m.metadata.name.includes('reconciliation') || component(m) === 'reconciliation')).toEqual([]);
    expect(JSON.stringify(ofKind(without, 'NetworkPolicy'))).not.toContain('"reconciliation"');
  });

  it('offers a ServiceMonitor on the ops ports only when asked', () => {
    expect(ofKind(defaults, 'ServiceMonitor')).toEqual([]);
    const [sm] = ofKind(production, 'ServiceMonitor');
    expect(sm!.spec.endpoints).toEqual([expect.objectContaining({ port: 'ops', path: '/metrics' })]);
    for (const s of ofKind(production, 'Service').filter((x) => x.spec.clusterIP !== 'None')) expect(s.spec.ports.map((p: any) => p.name)).toContain('ops');
  });
});

describe('helm chart: the gRPC mesh (mutual TLS by identity, signed caller context)', () => {
  const MESH = STATELESS; // every process but the sandbox
  const MESH_DIR = '/var/run/wallet/mesh';
  const pod = (ms: Manifest[], name: string) => byComponent(ms, 'Deployment', name)!.spec.template.spec;
  const envOf = (ms: Manifest[], name: string): Record<string, string> =>
    Object.fromEntries(
      pod(ms, name)
        .containers[0].env.filter((e: any) => e.value !== undefined)
        .map((e: any) => [e.name, e.value]),
    );
  const volume = (ms: Manifest[], name: string, vol: string) => pod(ms, name).volumes.find((v: any) => v.name === vol);
  const certificates = (ms: Manifest[]) => ofKind(ms, 'Certificate');
  const uriOf = (c: Manifest) => c.spec.uris;

  /** The fields the chart sets on a Certificate (checked by hand: the CRD model accepts unknown fields). */
  const CERT_SPEC_KEYS = ['secretName', 'secretTemplate', 'uris', 'dnsNames', 'usages', 'privateKey', 'duration', 'renewBefore', 'issuerRef'];

  function checkCertificate(c: Manifest, identity: string, issuer: { name: string; kind: string }, lifetime = { duration: '2160h', renewBefore: '720h' }) {
    expect(c.apiVersion).toBe('cert-manager.io/v1');
    expect(Object.keys(c.spec).filter((k) => !CERT_SPEC_KEYS.includes(k))).toEqual([]);
    expect(c.spec.uris).toEqual([`spiffe://wallet/${identity}`]);
    expect(c.spec.secretName).toBe(`rel-wallet-mesh-${identity}`);
    expect(c.spec.privateKey).toEqual({ algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' });
    expect({ duration: c.spec.duration, renewBefore: c.spec.renewBefore }).toEqual(lifetime);
    expect(c.spec.issuerRef).toEqual({ ...issuer, group: 'cert-manager.io' });
    // No common name nor other identity that a client could mistake for the URI.
    expect(c.spec).not.toHaveProperty('commonName');
    expect(c.spec.secretTemplate.labels['app.kubernetes.io/instance']).toBe('rel');
    if (identity === 'ops') {
      expect(c.spec.usages).toEqual(['client auth', 'digital signature', 'key encipherment']);
      expect(c.spec.dnsNames).toBeUndefined();
    } else {
      expect(c.spec.usages).toEqual(['server auth', 'client auth', 'digital signature', 'key encipherment']);
      expect(c.spec.dnsNames).toEqual([
        `rel-wallet-${identity}`,
        `rel-wallet-${identity}.wallet`,
        `rel-wallet-${identity}.wallet.svc`,
        `rel-wallet-${identity}.wallet.svc.cluster.local`,
      ]);
    }
  }

  /** What every mesh Deployment must have, whatever the mode: its own certificate and the caller-context key(s). */
  function checkMounts(ms: Manifest[], meshSecret: (identity: string) => string, callerContextSecret: string) {
    for (const name of MESH) {
      const spec = pod(ms, name);
      const env = envOf(ms, name);
      expect([name, env.MESH_TLS_DIR]).toEqual([name, MESH_DIR]);
      const mounts = spec.containers[0].volumeMounts;
      expect(mounts).toEqual(
        expect.arrayContaining([
          { name: 'mesh-tls', mountPath: MESH_DIR, readOnly: true },
          { name: 'caller-context', mountPath: '/var/run/wallet/caller-context', readOnly: true },
        ]),
      );
      expect(volume(ms, name, 'mesh-tls').secret).toEqual({
        secretName: meshSecret(name),
        defaultMode: 0o440,
        items: [
          { key: 'ca.crt', path: 'ca.crt' },
          { key: 'tls.crt', path: 'tls.crt' },
          { key: 'tls.key', path: 'tls.key' },
        ],
      });
      const cc = volume(ms, name, 'caller-context').secret;
      expect(cc.secretName).toBe(callerContextSecret);
      expect(cc.defaultMode).toBe(0o440);
      expect(env.CALLER_CONTEXT_PUBLIC_KEY_FILE).toBe('/var/run/wallet/caller-context/public.pem');
      // The private key is projected into the gateway only; every other pod gets public.pem alone.
      if (name === 'gateway') {
        expect(cc.items).toEqual([
          { key: 'public.pem', path: 'public.pem' },
          { key: 'private.pem', path: 'private.pem' },
        ]);
        expect(env.CALLER_CONTEXT_PRIVATE_KEY_FILE).toBe('/var/run/wallet/caller-context/private.pem');
      } else {
        expect([name, cc.items]).toEqual([name, [{ key: 'public.pem', path: 'public.pem' }]]);
        expect([name, env.CALLER_CONTEXT_PRIVATE_KEY_FILE]).toEqual([name, undefined]);
      }
    }
    // No pod at all (Deployments and Jobs) may see private.pem but the gateway's, nor mount the whole caller-context Secret.
    for (const w of [...ofKind(ms, 'Deployment'), ...ofKind(ms, 'Job')]) {
      for (const v of w.spec.template.spec.volumes ?? []) {
        if (v.secret?.secretName !== callerContextSecret) continue;
        expect([w.metadata.name, Array.isArray(v.secret.items)]).toEqual([w.metadata.name, true]);
        if (component(w) !== 'gateway') expect([w.metadata.name, v.secret.items.map((i: any) => i.key)]).toEqual([w.metadata.name, ['public.pem']]);
      }
    }
    // The sandbox (plain HTTP, like the real providers) and the migration Jobs (no gRPC) get no mesh credentials.
    const outside = [...ofKind(ms, 'Job'), ...ofKind(ms, 'Deployment').filter((d) => component(d) === 'sandbox')];
    for (const w of outside) {
      const text = JSON.stringify(w.spec.template.spec);
      expect([w.metadata.name, /MESH_TLS_DIR|CALLER_CONTEXT|mesh-tls|caller-context|\/var\/run\/wallet/.test(text)]).toEqual([w.metadata.name, false]);
    }
  }

  it('certManager mode (the default): one Certificate per mesh process, its URI exactly spiffe://wallet/<identity>, valid against the cert-manager CRD', async () => {
    for (const [ms, issuer] of [
      [defaults, { name: 'wallet-mesh-ca', kind: 'Issuer' }],
      [production, { name: 'wallet-mesh-ca', kind: 'ClusterIssuer' }],
    ] as const) {
      const certs = certificates(ms);
      expect(certs.map(component).sort()).toEqual([...MESH].sort());
      for (const c of certs) checkCertificate(c, component(c)!, issuer);
      expect(certs.map(uriOf).flat().sort()).toEqual(MESH.map((n) => `spiffe://wallet/${n}`).sort());
      // Each DNS name is a Service of the release (the URI is what clients check; the names serve tools).
      const services = new Set(ofKind(ms, 'Service').map((s) => s.metadata.name));
      for (const c of certs) expect(services.has(c.spec.dnsNames[0])).toBe(true);
      expect(await validateAll(certs)).toEqual([]);
    }
    // The CRD schema is not vacuous.
    const bad = structuredClone(certificates(defaults)[0]!);
    bad.spec.privateKey.algorithm = 'EC';
    bad.spec.usages = ['server-auth'];
    expect(await validateAll([bad])).toHaveLength(1);
    // Values reach the Certificates.
    const tuned = render([
      '--set',
      'mesh.certificates.duration=720h',
      '--set',
      'mesh.certificates.renewBefore=240h',
      '--set',
      'mesh.certificates.issuerRef.kind=ClusterIssuer',
      '--set',
      'mesh.certificates.clusterDomain=corp.local',
    ]);
    for (const c of certificates(tuned))
      checkCertificate(
        { ...c, spec: { ...c.spec, dnsNames: c.spec.dnsNames.map((d: string) => d.replace('corp.local', 'cluster.local')) } },
        component(c)!,
        { name: 'wallet-mesh-ca', kind: 'ClusterIssuer' },
        { duration: '720h', renewBefore: '240h' },
      );
    expect(byComponent(tuned, 'Certificate', 'ledger')!.spec.dnsNames).toContain('rel-wallet-ledger.wallet.svc.corp.local');
    // A process switched off gets no certificate.
    expect(certificates(render(['--set', 'webhook.enabled=false'])).map(component)).not.toContain('webhook');
  });

  it("certManager mode mounts each process's own certificate Secret at MESH_TLS_DIR and the caller-context keys, the private one in the gateway only", () => {
    for (const ms of [defaults, production]) {
      const secretOf = (identity: string) => certificates(ms).find((c) => c.spec.uris[0] === `spiffe://wallet/${identity}`)!.spec.secretName;
      checkMounts(ms, secretOf, ms === production ? 'wallet-caller-context' : 'rel-wallet-caller-context');
      // Every process its own: no two Deployments share a certificate Secret.
      const secrets = MESH.map((n) => volume(ms, n, 'mesh-tls').secret.secretName);
      expect(new Set(secrets).size).toBe(MESH.length);
    }
  });

  it('certManager mode refuses to render without an issuer, and checks the mode and the issuer kind', () => {
    expect(() => renderExactly([])).toThrow(/mesh\.certificates\.issuerRef\.name is required with mesh\.certificates\.mode=certManager/);
    expect(() => renderExactly(['--set', 'mesh.certificates.mode=certManager', '--set', 'sandbox.enabled=true'])).toThrow(/issuerRef\.name is required/);
    // (`helm lint` only warns about a `required` value; `helm template` and `helm install` stop.)
    expect(() => render(['--set', 'mesh.certificates.mode=selfSigned'])).toThrow(/mesh\.certificates\.mode must be certManager or existingSecrets/);
    expect(() => render(['--set', 'mesh.certificates.issuerRef.kind=Vault'])).toThrow(/issuerRef\.kind must be Issuer or ClusterIssuer/);
    // An external issuer (another API group) keeps its own kind.
    const external = render(['--set', 'mesh.certificates.issuerRef.kind=GoogleCASIssuer', '--set', 'mesh.certificates.issuerRef.group=cas-issuer.jetstack.io']);
    expect(byComponent(external, 'Certificate', 'ledger')!.spec.issuerRef).toEqual({
      name: 'wallet-mesh-ca',
      kind: 'GoogleCASIssuer',
      group: 'cas-issuer.jetstack.io',
    });
  });

  it('existingSecrets mode renders no Certificate and mounts the named Secrets (default <fullname>-mesh-<identity>)', async () => {
    const ms = renderExactly(['--set', 'mesh.certificates.mode=existingSecrets', '--set', 'mesh.opsCertificate.enabled=true']);
    expect(certificates(ms)).toEqual([]);
    expect(ms.filter((m) => m.apiVersion.startsWith('cert-manager.io'))).toEqual([]);
    checkMounts(ms, (id) => `rel-wallet-mesh-${id}`, 'rel-wallet-caller-context');
    expect(await validateAll(ms)).toEqual([]);
    const named = renderExactly([
      '--set',
      'mesh.certificates.mode=existingSecrets',
      '--set',
      'mesh.certificates.existingSecrets.pse-deposit=vault-pse',
      '--set',
      'mesh.certificates.existingSecrets.gateway=vault-gw',
      '--set',
      'mesh.callerContext.existingSecret=my-caller-context',
      '--set',
      'mesh.certificates.issuerRef.name=ignored-here',
    ]);
    expect(certificates(named)).toEqual([]);
    checkMounts(
      named,
      (id) => (({ 'pse-deposit': 'vault-pse', gateway: 'vault-gw' }) as Record<string, string>)[id] ?? `rel-wallet-mesh-${id}`,
      'my-caller-context',
    );
    // Production values switched to this mode.
    const prod = render(['-f', PRODUCTION, '--set', 'mesh.certificates.mode=existingSecrets']);
    expect(certificates(prod)).toEqual([]);
    checkMounts(prod, (id) => `rel-wallet-mesh-${id}`, 'wallet-caller-context');
  });

  it('offers an ops certificate (client only, mounted by no pod) for operator tools, off by default', () => {
    expect(certificates(defaults).map(component)).not.toContain('ops');
    expect(certificates(production).map(component)).not.toContain('ops');
    // No Job or CronJob of the chart calls gRPC (the migrations do not; the invariant check reads the database).
    expect(ofKind(defaults, 'CronJob')).toEqual([]);
    const ms = render(['--set', 'mesh.opsCertificate.enabled=true']);
    const ops = byComponent(ms, 'Certificate', 'ops')!;
    checkCertificate(ops, 'ops', { name: 'wallet-mesh-ca', kind: 'Issuer' });
    expect(JSON.stringify(ofKind(ms, 'Deployment'))).not.toContain('rel-wallet-mesh-ops');
    const short = render([
      '--set',
      'mesh.opsCertificate.enabled=true',
      '--set',
      'mesh.opsCertificate.duration=24h',
      '--set',
      'mesh.opsCertificate.renewBefore=8h',
    ]);
    expect(byComponent(short, 'Certificate', 'ops')!.spec).toMatchObject({ duration: '24h', renewBefore: '8h' });
    expect(byComponent(short, 'Certificate', 'ledger')!.spec).toMatchObject({ duration: '2160h', renewBefore: '720h' });
  });

  it('annotates the mesh Deployments for Reloader only when asked', () => {
    for (const d of ofKind(defaults, 'Deployment')) expect(d.metadata.annotations?.['secret.reloader.stakater.com/reload']).toBeUndefined();
    const ms = render(['--set', 'mesh.reloader.enabled=true']);
    for (const name of MESH) {
      expect(byComponent(ms, 'Deployment', name)!.metadata.annotations!['secret.reloader.stakater.com/reload']).toBe(
        `rel-wallet-mesh-${name},rel-wallet-caller-context`,
      );
    }
    expect(byComponent(ms, 'Deployment', 'sandbox')!.metadata.annotations).toBeUndefined();
  });

  it('mounts what the processes read: an ECDSA P-256 certificate from a CA (as cert-manager issues it) and the documented openssl keys pass the production start-up check', async () => {
    const { meshTlsFromEnv, identityOf } = await import('@wallet/platform');
    const work = mkdtempSync(join(tmpdir(), 'wallet-chart-mesh-'));
    const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      // The mesh root CA of a cert-manager CA issuer, then one leaf per identity the way the chart's Certificate asks for it.
      ssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'ca.key']);
      ssl([
        'req',
        '-x509',
        '-new',
        '-key',
        'ca.key',
        '-subj',
        '/O=wallet/CN=wallet mesh CA',
        '-days',
        '2',
        '-out',
        'ca.crt',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ]);
      const mounted = (ms: Manifest[], name: string) => {
        // The Deployment's paths, rooted in the work directory; files named by the volumes' items.
        const spec = pod(ms, name);
        const root = join(work, name);
        for (const m of spec.containers[0].volumeMounts.filter((v: any) => v.mountPath.startsWith('/var/run/wallet/'))) {
          const dir = join(root, m.mountPath);
          mkdirSync(dir, { recursive: true });
          for (const item of spec.volumes.find((v: any) => v.name === m.name).secret.items) {
            const source = m.name === 'mesh-tls' ? join(work, item.key === 'ca.crt' ? 'ca.crt' : `${name}.${item.key}`) : join(work, item.key);
            writeFileSync(join(dir, item.path), readFileSync(source));
          }
        }
        return Object.fromEntries(Object.entries(envOf(ms, name)).map(([k, v]) => [k, join(root, v)]));
      };
      for (const name of ['gateway', 'ledger']) {
        // cert-manager's default private key encoding (PKCS1) is SEC1 "EC PRIVATE KEY" for ECDSA.
        ssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.tls.key`]);
        ssl(['req', '-new', '-key', `${name}.tls.key`, '-subj', '/', '-out', `${name}.csr`]);
        writeFileSync(
          join(work, `${name}.ext`),
          `subjectAltName=URI:spiffe://wallet/${name},DNS:rel-wallet-${name}\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n`,
        );
        ssl([
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          'ca.crt',
          '-CAkey',
          'ca.key',
          '-CAcreateserial',
          '-days',
          '1',
          '-extfile',
          `${name}.ext`,
          '-out',
          `${name}.tls.crt`,
        ]);
      }
      // The caller-context keys exactly as helm/README.md says to make them.
      ssl(['genpkey', '-algorithm', 'ed25519', '-out', 'private.pem']);
      ssl(['pkey', '-in', 'private.pem', '-pubout', '-out', 'public.pem']);

      const gateway = meshTlsFromEnv('gateway', { NODE_ENV: 'production', ...mounted(production, 'gateway') });
      const ledger = meshTlsFromEnv('ledger', { NODE_ENV: 'production', ...mounted(production, 'ledger') });
      expect(gateway.callerSigningKey?.asymmetricKeyType).toBe('ed25519');
      expect(ledger.callerVerifyKey?.asymmetricKeyType).toBe('ed25519');
      expect(ledger.callerSigningKey).toBeUndefined();
      expect(existsSync(join(work, 'ledger', '/var/run/wallet/caller-context/private.pem'))).toBe(false);

      // And the two hold a mutual TLS session in which each sees the other's identity.
      const server = createTlsServer({ ca: ledger.ca, cert: ledger.cert, key: ledger.key, requestCert: true, rejectUnauthorized: true }, (s) => {
        s.end(identityOf(s.getPeerCertificate()) ?? 'none');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        const seen = await new Promise<{ server: string | undefined; client: string }>((resolve, reject) => {
          const sock = tlsConnect(
            { host: '127.0.0.1', port, ca: gateway.ca, cert: gateway.cert, key: gateway.key, checkServerIdentity: () => undefined },
            () => {
              let data = '';
              sock
                .on('data', (d) => {
                  data += d;
                })
                .on('end', () => resolve({ server: identityOf(sock.getPeerCertificate()), client: data }));
            },
          );
          sock.on('error', reject);
        });
        expect(seen).toEqual({ server: 'ledger', client: 'gateway' });
      } finally {
        server.close();
      }
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
