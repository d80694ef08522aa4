// The Docker engine for `npm run test:images`: the one DOCKER_HOST (or the default socket) names
// when it answers; otherwise one of our own, started here and stopped by pid at the end:
// Debian's docker.io (installed with apt when missing, as root on Debian), with its own data root,
// exec root and socket, no iptables and no bridge (TOOLCHAIN.md, "Containers"): every build and
// container uses `--network host`, so all traffic stays on this machine's loopback.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

// Debian's client: the preinstalled /usr/local/bin/docker has no buildx plugin, so BuildKit
// builds (RUN --mount=type=cache) need the classic client with DOCKER_BUILDKIT=1.
// Asked each time: this check may install it (docker.io) after this module is loaded.
export const dockerBin = () => (existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function dockerEnv(host) {
  return { ...process.env, DOCKER_BUILDKIT: '1', BUILDKIT_PROGRESS: 'plain', ...(host ? { DOCKER_HOST: host } : {}) };
}

function answers(host) {
  const r = spawnSync(dockerBin(), ['version', '--format', '{{.Server.Version}}'], { env: dockerEnv(host), encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? r.stdout.trim() : false;
}

function aptInstall(pkgs, say) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  say(`apt-get install ${pkgs.join(' ')}`);
  if (spawnSync('apt-get', ['update', '-qq'], { env, stdio: 'inherit' }).status !== 0) throw new Error('apt-get update failed');
  if (spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { env, stdio: 'inherit' }).status !== 0) {
    throw new Error(`apt-get install ${pkgs.join(' ')} failed`);
  }
}

/** Debian packages this check needs on the host (docker.io for the engine, debootstrap for stand-ins). */
export function ensurePackages(binaries, say) {
  const missing = Object.entries(binaries)
    .filter(([bin]) => !existsSync(bin))
    .map(([, pkg]) => pkg);
  if (!missing.length) return;
  if (process.getuid?.() !== 0 || !existsSync('/etc/debian_version')) {
    throw new Error(`needs ${missing.join(', ')} (Debian packages); install them, or run as root on Debian`);
  }
  aptInstall([...new Set(missing)], say);
}

/**
 * An engine that answers: { host, version, stop() }. `stateDir` holds our own engine's data root,
 * socket and log (kept between runs: base images and the npm cache of builds stay).
 */
export async function ensureEngine({ stateDir, say }) {
  const given = process.env.DOCKER_HOST;
  const existing = answers(given);
  if (existing) {
    say(`engine: Docker ${existing} at ${given ?? 'the default socket'}`);
    return { host: given, version: existing, started: false, stop: async () => {} };
  }
  ensurePackages({ '/usr/sbin/dockerd': 'docker.io', '/usr/bin/docker': 'docker.io' }, say);
  mkdirSync(stateDir, { recursive: true });
  const sock = join(stateDir, 'docker.sock');
  const host = `unix://${sock}`;
  const already = answers(host);
  if (already) {
    say(`engine: our own Docker ${already} from an earlier run at ${host}`);
    return { host, version: already, started: false, stop: async () => {} };
  }
  // One per state directory (two clones may each run their own engine).
  const execRoot = `/run/wallet-images-${createHash('sha256').update(stateDir).digest('hex').slice(0, 12)}`;
  const args = [
    '--data-root',
    join(stateDir, 'data'),
    '--exec-root',
    execRoot,
    '--host',
    host,
    '--pidfile',
    join(stateDir, 'dockerd.pid'),
    '--storage-driver=overlay2',
    '--iptables=false',
    '--ip6tables=false',
    '--bridge=none',
    '--ip-masq=false',
  ];
  say(`engine: none answers: starting dockerd ${args.join(' ')} (log: ${join(stateDir, 'dockerd.log')})`);
  const log = openSync(join(stateDir, 'dockerd.log'), 'a');
  const child = spawn('/usr/sbin/dockerd', args, { detached: true, stdio: ['ignore', log, log] });
  child.unref();
  let version = false;
  for (let i = 0; i < 120 && !version; i++) {
    if (child.exitCode !== null) break;
    await sleep(500);
    version = answers(host);
  }
  if (!version) {
    const tail = readFileSync(join(stateDir, 'dockerd.log'), 'utf8').split('\n').slice(-15).join('\n');
    try {
      process.kill(child.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
    throw new Error(`dockerd did not answer at ${host}:\n${tail}`);
  }
  say(`engine: Docker ${version} (pid ${child.pid})`);
  return {
    host,
    version,
    started: true,
    pid: child.pid,
    async stop() {
      say(`engine: stopping dockerd (pid ${child.pid})`);
      const gone = async () => {
        for (let i = 0; i < 60; i++) {
          try {
            process.kill(child.pid, 0);
          } catch {
            return true;
          }
          await sleep(500);
        }
        return false;
      };
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      if (!(await gone())) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
        await gone();
      }
      // dockerd leaves its host network namespace mounted under the exec root.
      for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
        const target = line.split(' ')[1];
        if (target?.startsWith(`${execRoot}/`)) spawnSync('umount', [target]);
      }
      rmSync(execRoot, { recursive: true, force: true });
    },
  };
}
