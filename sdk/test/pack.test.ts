import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
const repo = join(sdk, '..');
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8', timeout: 120_000 });

/**
 * What `npm pack` ships (needs the built dist: `npx turbo run build`), made offline, and that the packed
 * package works as an integrator installs it: the tarball unpacked into a project's node_modules, its
 * types compiled in strict mode and its entry point imported.
 */
describe('npm pack of @wallet/client', () => {
  const work = mkdtempSync(join(tmpdir(), 'wallet-client-pack-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  let tarball = '';
  let files: string[] = [];
  beforeAll(() => {
    const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], sdk)) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info!.filename);
    files = info!.files.map((f) => f.path).sort();
  }, 120_000);

  it('holds the built code with its declarations, the README and the document, and no sources or tests', () => {
    for (const f of [
      'package.json',
      'README.md',
      'openapi.json',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/client.js',
      'dist/generated/openapi.d.ts',
      'dist/webhooks.js',
    ])
      expect(files).toContain(f);
    expect(
      files.filter(
        (f) =>
          /^(src|test|scripts|examples)\//.test(f) || /\.(spec|test)\./.test(f) || f.endsWith('.map') || (f.startsWith('dist/') === false && f.endsWith('.ts')),
      ),
    ).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(sdk, 'package.json'), 'utf8'));
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['openapi-fetch', 'standardwebhooks']);
  });

  it('installs into a project: its types compile in strict mode and its entry point loads', () => {
    const app = join(work, 'app');
    const pkg = join(app, 'node_modules', '@wallet', 'client');
    mkdirSync(pkg, { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', pkg, '--strip-components=1']);
    // Its dependencies as npm would install them (from this checkout's node_modules: no network).
    for (const dep of ['openapi-fetch', 'openapi-typescript-helpers', 'standardwebhooks', '@stablelib', 'fast-sha256', '@types', 'undici-types'])
      symlinkSync(join(repo, 'node_modules', dep), join(app, 'node_modules', dep));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'integrator', type: 'module', private: true }));
    writeFileSync(
      join(app, 'app.ts'),
      `import { WalletClient, WalletApiError, verifyWebhook, type Movement, type SendTransferRequest } from '@wallet/client';
const wallet = new WalletClient({ baseUrl: 'https://api.example.com', apiKey: 'wk_test_x', timeoutMs: 5000, maxRetries: 1 });
const body: SendTransferRequest = { amount: 10000, destination: { brebKey: { type: 'PHONE', value: '3001234567' } }, targetName: 'Ana', targetDocument: '1020304050' };
export async function run(): Promise<string[]> {
  const t = await wallet.transfers.send(body, { idempotencyKey: 'order-1' });
  const ids: string[] = [t.id];
  for await (const m of wallet.movements.list()) ids.push((m satisfies Movement).id);
  return ids;
}
export const isApiError = (e: unknown) => e instanceof WalletApiError && e.error === 'INSUFFICIENT_BALANCE';
export const verify = verifyWebhook;
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2023', 'DOM'],
          types: ['node'],
          noEmit: true,
          skipLibCheck: true,
        },
      }),
    );
    execFileSync(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], { cwd: app, encoding: 'utf8' });
    const loaded = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('@wallet/client'); console.log(Object.keys(m).sort().join(','))"],
      {
        cwd: app,
        encoding: 'utf8',
      },
    );
    expect(loaded.trim().split(',')).toEqual(
      expect.arrayContaining(['WalletClient', 'WalletApiError', 'WalletTimeoutError', 'Paginator', 'verifyWebhook', 'operations']),
    );
  }, 120_000);
});
