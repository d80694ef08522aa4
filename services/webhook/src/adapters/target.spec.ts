import { TargetRefused, checkUrlShape, isBlockedAddress, resolveTarget } from './target.js';

describe('SSRF target rules', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a9fe:a9fe',
    '::ffff:10.0.0.1',
  ])('blocks %s', (a) => {
    expect(isBlockedAddress(a)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows the public address %s', (a) => {
    expect(isBlockedAddress(a)).toBe(false);
  });

  it('requires https and refuses credentials in strict mode; allows loopback http otherwise', async () => {
    expect(() => checkUrlShape('http://example.com/hook', { strict: true })).toThrow(TargetRefused);
    expect(() => checkUrlShape('https://user:pw@example.com/hook', { strict: true })).toThrow(TargetRefused);
    expect(() => checkUrlShape('ftp://example.com', { strict: false })).toThrow(TargetRefused);
    expect(checkUrlShape('https://example.com/hook?x=1', { strict: true }).hostname).toBe('example.com');
    const loose = checkUrlShape('http://127.0.0.1:9/hook', { strict: false });
    await expect(resolveTarget(loose, { strict: false }, async () => [])).resolves.toEqual({ address: '127.0.0.1', family: 4 });
  });

  it('refuses a host when any of its addresses is private (strict), and pins the checked one', async () => {
    const url = new URL('https://hooks.example.com/x');
    await expect(
      resolveTarget(url, { strict: true }, async () => [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ]),
    ).rejects.toThrow(TargetRefused);
    await expect(resolveTarget(url, { strict: true }, async () => [{ address: '93.184.216.34', family: 4 }])).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(resolveTarget(new URL('https://localhost/x'), { strict: true }, async () => [{ address: '93.184.216.34', family: 4 }])).rejects.toThrow(
      TargetRefused,
    );
    await expect(
      resolveTarget(url, { strict: true }, async () => {
        throw new Error('ENOTFOUND');
      }),
    ).rejects.toThrow(/no se pudo resolver/);
  });
});
