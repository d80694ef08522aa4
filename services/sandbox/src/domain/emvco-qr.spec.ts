import { brebQrPayload } from '../../test/support.js';
import { InvalidQr, readBrebQr } from './emvco-qr.js';

describe("the payer's app reading a Bre-B QR", () => {
  const expiresAt = new Date('2026-12-01T15:04:05Z');

  it('reads the key (template 26, GUI CO.BREB), the amount (54), the transaction id (62/05) and the expiry (80/01)', () => {
    const p = brebQrPayload({ keyValue: '@cobro12345', amountCents: 1_500_050, transactionId: 'TX-1', expiresAt });
    expect(readBrebQr(p)).toEqual({ keyValue: '@cobro12345', pointOfInitiation: '12', amountCents: 1_500_050n, transactionId: 'TX-1', expiresAt });
    expect(readBrebQr(brebQrPayload({ keyValue: '@static1' }))).toEqual({
      keyValue: '@static1',
      pointOfInitiation: '11',
      amountCents: null,
      transactionId: null,
      expiresAt: null,
    });
  });

  it('a published CRC vector checks (the Pix example), but without a CO.BREB key it is no Bre-B QR', () => {
    const pix = '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
    expect(() => readBrebQr(pix)).toThrow(/no Bre-B key/);
  });

  it('refuses a CRC that does not check, a truncated field, a bad amount or expiry, and a transaction id over 35', () => {
    const p = brebQrPayload({ keyValue: '@cobro12345', amountCents: 100, transactionId: 'TX-1', expiresAt });
    const cases = [
      p.replace('@cobro12345', '@cobro12346'),
      p.slice(0, -1),
      '',
      brebQrPayload({ keyValue: '@k123', gui: 'BR.GOV' }),
      brebQrPayload({ keyValue: '@k123', transactionId: 'x'.repeat(36) }),
    ];
    for (const bad of cases) expect(() => readBrebQr(bad)).toThrow(InvalidQr);
    // A valid CRC over a malformed amount / expiry.
    const withCrc = (body: string) => {
      let crc = 0xffff;
      for (const b of Buffer.from(`${body}6304`)) {
        crc ^= b << 8;
        for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
      }
      return `${body}6304${crc.toString(16).toUpperCase().padStart(4, '0')}`;
    };
    const key = '26230007CO.BREB0108@k123456';
    expect(readBrebQr(withCrc(`000201010212${key}54031.5`)).amountCents).toBe(150n);
    expect(() => readBrebQr(withCrc(`000201010212${key}5403abc`))).toThrow(/amount/);
    expect(() => readBrebQr(withCrc(`000201010212${key}80290007CO.BREB011420261301000000`))).toThrow(/expiry/);
  });
});
