// `npm run test:images`: builds every process image from deploy/docker/ for real, runs
// deploy/compose.yaml with them and proves the product through the containers. Heavy (a Docker
// engine, base images, eight builds): not part of `npm test`.
//
//   1. an engine: the one that answers, else Debian's dockerd of our own (engine.mjs)
//   2. base images: the real ones where pullable, else stand-ins from Debian's packages (standins.mjs)
//   3. every process image, `docker build --network host`, timed and measured, tagged as compose and
//      the Helm chart name it (names.mjs), with a CycloneDX SBOM of its production dependencies
//   4. the compose file as `docker run`s on the host network (stack.mjs), every process /readyz,
//      then through the gateway: a company, a credit, a Bre-B send COMPLETED, a PSE link paid, a
//      receipt PDF (scenario.mjs)
//   5. a table of image sizes and build times; everything it started is stopped (containers and
//      volumes by label, our dockerd by pid)
// Output in dist-images/: report.md, report.json, <process>.cdx.json (SBOMs), logs/.
// Options: --fresh (stand-ins built again, builds without cache), --no-pull (skip trying the real
// base images), --keep (leave the stack running; stop it with --down), --only=gateway,ledger (build
// only those; the others must exist), --down (stop what a --keep run left).
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { dockerBin, dockerEnv, ensureEngine } from './engine.mjs';
import { chartImage, composeImage } from './names.mjs';
import { provePipeline } from './scenario.mjs';
import { planStack, startStack, stopStack, logsOf } from './stack.mjs';
import { baseImages } from './standins.mjs';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const STATE = join(REPO, '.tools', 'images');
const OUT = join(REPO, 'dist-images');
const PROJECT = 'wallet-images';
const CYCLONEDX = '@cyclonedx/cyclonedx-npm@6.0.1';
const SBOM_NPM = 'npm@10.9.9';
const ADMIN_TOKEN = 'dev-admin-token';

const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const t0 = Date.now();
const say = (m) => console.log(`[images ${String(Math.round((Date.now() - t0) / 1000)).padStart(4)} s] ${m}`);
const secs = (ms) => (ms / 1000).toFixed(1);
const mb = (bytes) => (bytes / 1e6).toFixed(1);

const { processes, NODE_FLAGS } = await import(join(REPO, 'deploy', 'local', 'processes.mjs'));
const pkgOf = (p) => JSON.parse(readFileSync(join(REPO, p.dir, 'package.json'), 'utf8')).name;

function docker(host, argv, opts = {}) {
  return spawnSync(dockerBin(), argv, { env: dockerEnv(host), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...opts });
}

function build(host, p, nodeImage, log) {
  const argv = [
    'build',
    '--network',
    'host',
    '--progress',
    'plain',
    '-f',
    `deploy/docker/${p.name}.Dockerfile`,
    '--build-arg',
    `NODE_IMAGE=${nodeImage}`,
    '-t',
    composeImage(p.name),
    '-t',
    chartImage(p.name),
    ...(flag('fresh') ? ['--no-cache'] : []),
    '.',
  ];
  return new Promise((resolve) => {
    const started = Date.now();
    const c = spawn(dockerBin(), argv, { cwd: REPO, env: dockerEnv(host), stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (d) => {
      appendFileSync(log, d);
      tail = (tail + d).slice(-6000);
    };
    c.stdout.on('data', onData);
    c.stderr.on('data', onData);
    c.on('exit', (code) => resolve({ ok: code === 0, ms: Date.now() - started, tail, argv }));
  });
}

/** The SBOM tool (and an npm for it: the images need none of their own), installed once into .tools. */
function sbomTool() {
  const dir = join(STATE, 'cyclonedx');
  const cli = join(dir, 'node_modules', '@cyclonedx', 'cyclonedx-npm', 'bin', 'cyclonedx-npm-cli.js');
  if (!existsSync(cli) || !existsSync(join(dir, 'node_modules', 'npm', 'bin', 'npm-cli.js'))) {
    say(`installing ${CYCLONEDX} (and ${SBOM_NPM} for it) into ${dir}`);
    mkdirSync(dir, { recursive: true });
    const r = spawnSync(
      'npm',
      ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', CYCLONEDX, SBOM_NPM],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`npm install ${CYCLONEDX}: ${r.stderr}`);
  }
  return dir;
}

/**
 * CycloneDX SBOM of what the image really holds: the tool runs inside a container of the image
 * (read-only, no network, as the image's user) against /app, production dependencies only.
 */
function sbom(host, p, image, toolDir) {
  const file = `${p.name}.cdx.json`;
  const r = docker(host, [
    'run',
    '--rm',
    '--network',
    'none',
    '--read-only',
    '--tmpfs',
    '/tmp',
    '--user',
    '1000:1000',
    '--cap-drop',
    'ALL',
    '-e',
    'HOME=/tmp',
    '-e',
    'npm_execpath=/sbom/node_modules/npm/bin/npm-cli.js',
    '-e',
    'NODE_ENV=production',
    '-v',
    `${toolDir}:/sbom:ro`,
    '-w',
    '/app',
    '--entrypoint',
    'node',
    image,
    '/sbom/node_modules/@cyclonedx/cyclonedx-npm/bin/cyclonedx-npm-cli.js',
    '--omit',
    'dev',
    '--workspace',
    pkgOf(p),
    // npm ls flags @opentelemetry/api 1.10.0 as outside @opentelemetry/core's peer range (<1.10.0):
    // true of the lockfile itself (the host's `npm ls` says the same), not of the image; the list
    // of what is installed is complete all the same.
    '--ignore-npm-errors',
    '--output-reproducible',
    '--output-format',
    'JSON',
    '--output-file',
    '-',
    '/app/package.json',
  ]);
  if (r.status !== 0) throw new Error(`SBOM of ${p.name}: ${r.stderr.split('\n').slice(-15).join('\n')}`);
  const doc = JSON.parse(r.stdout);
  writeFileSync(join(OUT, file), r.stdout);
  return { file, components: doc.components?.length ?? 0 };
}

/**
 * What the built image says of itself (docker image inspect), against the local runner: the start
 * command (flags, OTel preload, entry point), the user, the working directory, NODE_ENV.
 */
function checkImageConfig(host, p, image) {
  const c = JSON.parse(docker(host, ['image', 'inspect', '--format', '{{json .Config}}', image]).stdout);
  const want = {
    Cmd: ['node', ...NODE_FLAGS, '--import', '@wallet/platform/otel', p.main],
    User: '1000:1000',
    WorkingDir: `/app/${p.dir}`,
    NODE_ENV: 'production',
    Healthcheck: true,
  };
  const got = {
    Cmd: c.Cmd,
    User: c.User,
    WorkingDir: c.WorkingDir,
    NODE_ENV: c.Env?.find((e) => e.startsWith('NODE_ENV='))?.slice(9),
    Healthcheck: Boolean(c.Healthcheck?.Test?.join(' ').includes('/healthz')),
  };
  if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`${image}: image config ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
}

function imageSize(host, image) {
  return Number(docker(host, ['image', 'inspect', '--format', '{{.Size}}', image]).stdout.trim());
}

function opsUrl(p, ports) {
  const variable = Object.keys(ports).find((v) => /_OPS_PORT$/.test(v)) ?? 'SANDBOX_PORT';
  return `http://127.0.0.1:${ports[variable]}/readyz`;
}

async function main() {
  mkdirSync(join(OUT, 'logs'), { recursive: true });
  mkdirSync(STATE, { recursive: true });
  const engine = await ensureEngine({ stateDir: join(STATE, 'engine'), say });
  const host = engine.host;
  if (flag('down')) {
    stopStack({ host, project: PROJECT, say });
    await engine.stop();
    return 0;
  }
  let stackStarted = false;
  const report = { started: new Date(t0).toISOString(), engine: engine.version, bases: {}, images: [], steps: [], ok: false };
  try {
    stopStack({ host, project: PROJECT, say }); // what an interrupted run left
    report.bases = await baseImages({ host, stateDir: STATE, say, fresh: flag('fresh'), pull: !flag('no-pull') });

    const toolDir = sbomTool();
    for (const p of processes) {
      if (only && !only.includes(p.name)) continue;
      const log = join(OUT, 'logs', `${p.name}.build.log`);
      rmSync(log, { force: true });
      say(`building ${p.name} (${composeImage(p.name)}, ${chartImage(p.name)}) on ${report.bases.node.image}; log: ${log}`);
      const b = await build(host, p, report.bases.node.image, log);
      if (!b.ok) throw new Error(`docker build of ${p.name} failed (${secs(b.ms)} s):\n${b.tail}`);
      checkImageConfig(host, p, composeImage(p.name));
      const size = imageSize(host, composeImage(p.name));
      const s = sbom(host, p, composeImage(p.name), toolDir);
      report.images.push({
        name: p.name,
        image: composeImage(p.name),
        chart: chartImage(p.name),
        buildSeconds: Number(secs(b.ms)),
        sizeBytes: size,
        sbom: s.file,
        sbomComponents: s.components,
      });
      say(`built ${p.name}: ${mb(size)} MB in ${secs(b.ms)} s; SBOM ${s.file} (${s.components} components)`);
    }

    // The bases' sizes, for the table.
    for (const b of Object.values(report.bases)) b.sizeBytes = imageSize(host, b.image);

    // The servers of the compose file run on the bases found above (the real images, or the stand-ins).
    const composeDoc = parse(readFileSync(join(REPO, 'deploy', 'compose.yaml'), 'utf8'), { merge: true });
    const images = Object.fromEntries(['postgres', 'redis', 'nats'].map((n) => [composeDoc.services[n].image, report.bases[n].image]));
    const stack = await planStack({ repo: REPO, composeFile: join(REPO, 'deploy', 'compose.yaml'), project: PROJECT, images, processes });
    say(`starting deploy/compose.yaml as ${stack.plan.length} containers on the host network (${stack.plan.map((s) => s.name).join(', ')})`);
    stackStarted = true;
    const stackT = Date.now();
    await startStack({ host, stack, project: PROJECT, say });
    report.stackStartSeconds = Number(secs(Date.now() - stackT));
    say(`every container running and healthy in ${report.stackStartSeconds} s`);

    const envOf = (name) => {
      const svc = stack.plan.find((s) => s.name === name);
      const env = {};
      for (let i = 0; i < svc.args.length; i++)
        if (svc.args[i] === '-e') {
          const [k, ...v] = svc.args[i + 1].split('=');
          env[k] = v.join('=');
        }
      return env;
    };
    const ready = processes.map((p) => ({ name: p.name, url: opsUrl(p, Object.fromEntries(Object.entries(envOf(p.name)).filter(([k]) => /_PORT$/.test(k)))) }));
    report.steps = await provePipeline({
      ready,
      gateway: `http://127.0.0.1:${envOf('gateway').GATEWAY_PORT}`,
      sandbox: `http://127.0.0.1:${envOf('sandbox').SANDBOX_PORT}`,
      adminToken: ADMIN_TOKEN,
      say,
    });
    // Hardening as compose asks: non-root, read-only root, no capabilities.
    for (const p of processes) {
      const c = `${PROJECT}-${p.name}`;
      const h = JSON.parse(docker(host, ['inspect', '--format', '{{json .HostConfig}}', c]).stdout);
      const user = docker(host, ['inspect', '--format', '{{.Config.User}}', c]).stdout.trim();
      const uid = docker(host, ['exec', c, 'node', '-e', 'process.stdout.write(String(process.getuid()))']).stdout;
      const write = docker(host, [
        'exec',
        c,
        'node',
        '-e',
        'try{require("fs").writeFileSync("/app/x","x");process.stdout.write("writable")}catch(e){process.stdout.write(e.code)}',
      ]).stdout;
      if (!(h.ReadonlyRootfs && h.CapDrop?.includes('ALL') && user === '1000:1000' && uid === '1000' && write === 'EROFS')) {
        throw new Error(`${p.name} is not hardened: read-only ${h.ReadonlyRootfs}, cap_drop ${h.CapDrop}, user ${user}, uid ${uid}, write to /app: ${write}`);
      }
    }
    say('every process container runs as uid 1000 with a read-only root and no capabilities');
    report.ok = true;
  } catch (err) {
    say(`FAILED: ${err.message}`);
    if (stackStarted) {
      for (const p of ['postgres', 'nats', 'redis', ...processes.map((x) => x.name)]) {
        const logs = logsOf(host, `${PROJECT}-${p}`, 200);
        writeFileSync(join(OUT, 'logs', `${p}.container.log`), logs);
      }
      say(`container logs in ${join(OUT, 'logs')}`);
    }
  } finally {
    report.totalSeconds = Number(secs(Date.now() - t0));
    if (!flag('keep')) {
      stopStack({ host, project: PROJECT, say });
      // The engine's data root keeps the bases, the images and the npm cache of the builds for the
      // next run; the intermediate layers of the build stages (every dependency, ~1 GB a build) and
      // the images this run's tags replaced would only pile up.
      docker(host, ['builder', 'prune', '-f', '--filter', 'type=regular']);
      docker(host, ['image', 'prune', '-f']);
      await engine.stop();
    } else say(`--keep: the stack runs on (stop it with npm run test:images -- --down)`);
    writeFileSync(join(OUT, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(OUT, 'report.md'), table(report));
    console.log(`\n${table(report)}`);
  }
  return report.ok ? 0 : 1;
}

function table(report) {
  const lines = [
    `# npm run test:images, ${report.started}`,
    '',
    `Engine: Docker ${report.engine}. Result: ${report.ok ? 'passed' : 'FAILED'} in ${report.totalSeconds} s.`,
    '',
    '| base | image | size MB | built in s |',
    '|---|---|---:|---:|',
    ...Object.entries(report.bases).map(
      ([n, b]) =>
        `| ${n} | ${b.image}${b.standin ? ` (stand-in: ${b.what})` : ''} | ${b.sizeBytes ? mb(b.sizeBytes) : ''} | ${b.reused ? 'reused' : b.seconds} |`,
    ),
    '',
    '| process image | size MB | build s | SBOM (components) |',
    '|---|---:|---:|---|',
    ...report.images.map((i) => `| ${i.image} (${i.chart}) | ${mb(i.sizeBytes)} | ${i.buildSeconds} | ${i.sbom} (${i.sbomComponents}) |`),
  ];
  if (report.images.length) {
    const total = report.images.reduce((a, i) => a + i.buildSeconds, 0);
    lines.push(`| all ${report.images.length} | | ${total.toFixed(1)} | |`);
  }
  if (report.steps.length) {
    lines.push(
      '',
      '| check through the containers | ms | detail |',
      '|---|---:|---|',
      ...report.steps.map((s) => `| ${s.name} | ${s.ms} | ${s.detail ?? ''} |`),
    );
  }
  if (report.stackStartSeconds) lines.push('', `Stack start (servers, migrations, every process healthy): ${report.stackStartSeconds} s.`);
  return `${lines.join('\n')}\n`;
}

process.exit(await main());
