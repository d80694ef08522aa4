import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, createLogger } from '@wallet/platform';
import { captureLogs } from '@wallet/platform/testing';
import { DEVELOPMENT_SIGNER_CN, developmentSigningP12 } from './adapters/signing-key.js';
import { receiptSigningKey } from './compose.js';
import { loadConfig } from './config.js';

// Which key the service signs receipts with, as the composition root decides it at start.
describe('receiptSigningKey', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'receipt-key-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const withLogs = <T>(f: (log: ReturnType<typeof createLogger>) => T): { value: T; lines: string[] } => {
    const logs = captureLogs('info');
    try {
      return { value: f(createLogger('receipt', 'info')), lines: logs.lines() };
    } finally {
      logs.stop();
    }
  };

  it('outside production with none configured: a development key made at start, and one warning that names no secret', () => {
    const config = loadConfig({ NODE_ENV: 'development' });
    const { value: key, lines } = withLogs((log) => receiptSigningKey(config, log));
    expect(key).toMatchObject({ development: true, commonName: DEVELOPMENT_SIGNER_CN });
    const warnings = lines.filter((l) => /"level":"warn"/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('development key');
    expect(lines.join('\n')).not.toContain(config.RECEIPT_SIGNING_P12_PASSPHRASE);
    expect(lines.join('\n')).not.toMatch(/PRIVATE KEY|BEGIN/);
  });

  it('the configured PKCS#12 file: opened with its passphrase; a missing file or a wrong passphrase stops the start, naming the variable', () => {
    const file = join(dir, 'receipts.p12');
    writeFileSync(file, developmentSigningP12('operator-passphrase'));
    const config = loadConfig({ NODE_ENV: 'production', RECEIPT_SIGNING_P12_FILE: file, RECEIPT_SIGNING_P12_PASSPHRASE: 'operator-passphrase' });
    const { value: key, lines } = withLogs((log) => receiptSigningKey(config, log));
    expect(key.development).toBe(false);
    expect(lines.join('\n')).not.toContain('operator-passphrase');

    const fail = (env: Record<string, string>) => {
      try {
        receiptSigningKey(loadConfig(env), createLogger('receipt', 'silent'));
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('accepted');
    };
    const missing = fail({ RECEIPT_SIGNING_P12_FILE: join(dir, 'absent.p12') });
    expect(missing).toBeInstanceOf(ConfigError);
    expect(missing.problems).toEqual([expect.stringMatching(/^RECEIPT_SIGNING_P12_FILE: cannot read .*absent\.p12 \(ENOENT\)$/)]);
    const wrong = fail({ RECEIPT_SIGNING_P12_FILE: file, RECEIPT_SIGNING_P12_PASSPHRASE: 'the-wrong-passphrase' });
    expect(wrong.problems).toEqual([
      expect.stringMatching(/^RECEIPT_SIGNING_P12_FILE: .*not a PKCS#12 that this passphrase opens.*RECEIPT_SIGNING_P12_PASSPHRASE/),
    ]);
    expect(wrong.message).not.toContain('the-wrong-passphrase');
  });
});
