import { SecretBox } from './secret-box.js';

describe('SecretBox (AES-256-GCM)', () => {
  const box = new SecretBox('k'.repeat(32));

  it('round-trips, with a fresh IV each time', () => {
    const a = box.seal('JBSWY3DPEHPK3PXP');
    const b = box.seal('JBSWY3DPEHPK3PXP');
    expect(a).not.toBe(b);
    expect(a).not.toContain('JBSWY3DPEHPK3PXP');
    expect(box.open(a)).toBe('JBSWY3DPEHPK3PXP');
  });

  it('refuses another key and any alteration', () => {
    const sealed = box.seal('{"secret":"whsec_x"}');
    expect(() => new SecretBox('o'.repeat(32)).open(sealed)).toThrow();
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    expect(() => box.open([parts[0], parts[1], parts[2], ct.toString('base64url')].join('.'))).toThrow();
    expect(() => box.open('plain text')).toThrow();
  });
});
