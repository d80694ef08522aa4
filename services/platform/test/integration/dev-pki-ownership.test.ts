import { chmodSync, chownSync, mkdtempSync, rmSync, symlinkSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkDevPkiOwnership, devCallerContextKeyFiles, ensureDevPki } from '../../src/mesh/dev-pki.js';

/**
 * docs/security.md "The development mesh PKI on a shared machine": a development PKI planted in the shared temporary directory by another local
 * user (or left writable by others) is refused, never loaded: its gateway signing key would let its
 * author sign caller contexts our services trust.
 */
describe('the development mesh PKI is trusted only when it is ours', () => {
  let base: string;
  let root: string;
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'pki-owner-'));
    root = ensureDevPki(join(base, 'v1'), ['gateway']);
  }, 60_000);
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const asIs = <T>(_path: string, change: () => void, undo: () => void, fn: () => T): T => {
    change();
    try {
      return fn();
    } finally {
      undo();
    }
  };

  it('accepts the one this user made (and ensureDevPki checks it each time)', () => {
    expect(checkDevPkiOwnership(root)).toBe(root);
    expect(ensureDevPki(root, ['gateway'])).toBe(root);
  });

  it('refuses a file writable by others, a private key readable by others, and says which', () => {
    const cert = join(root, 'gateway', 'tls.crt');
    asIs(
      cert,
      () => chmodSync(cert, 0o666),
      () => chmodSync(cert, 0o644),
      () => expect(() => ensureDevPki(root, ['gateway'])).toThrow(`refusing the development mesh PKI at ${cert}: it is writable by others`),
    );
    const signing = devCallerContextKeyFiles(root).privateKeyFile;
    asIs(
      signing,
      () => chmodSync(signing, 0o644),
      () => chmodSync(signing, 0o600),
      () => expect(() => checkDevPkiOwnership(root)).toThrow(`refusing the development mesh PKI at ${signing}: a private key readable by others`),
    );
    const dir = join(root, 'gateway');
    asIs(
      dir,
      () => chmodSync(dir, 0o770),
      () => chmodSync(dir, 0o700),
      () => expect(() => checkDevPkiOwnership(root)).toThrow(/it is writable by its group/),
    );
  });

  it('refuses a file owned by another user, and a symbolic link planted in place of a key', () => {
    const uid = process.getuid!();
    const key = join(root, 'gateway', 'tls.key');
    if (uid === 0) {
      // As root (these machines): hand the key to another uid, as a planted one would be.
      asIs(
        key,
        () => chownSync(key, 4242, 4242),
        () => chownSync(key, 0, 0),
        () =>
          expect(() => checkDevPkiOwnership(root)).toThrow(`refusing the development mesh PKI at ${key}: it is owned by uid 4242, not by this user (uid 0)`),
      );
    }
    const aside = `${key}.real`;
    asIs(
      key,
      () => {
        renameSync(key, aside);
        symlinkSync(join(base, 'elsewhere.key'), key);
      },
      () => {
        rmSync(key);
        renameSync(aside, key);
      },
      () => expect(() => checkDevPkiOwnership(root)).toThrow(`refusing the development mesh PKI at ${key}: it is a symbolic link`),
    );
    expect(checkDevPkiOwnership(root)).toBe(root);
  });
});
