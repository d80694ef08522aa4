import { parse as parseEmvco } from 'promptparse';
import { crc16ccitt, crcHex, decodeQr, emvAmount, emvText, emvUtcStamp, encodeDynamicQr, encodeStaticQr, parseTlv, tlv } from './emvco.js';

describe('EMVCo QR', () => {
  it('CRC16-CCITT (0x1021, init 0xFFFF) known vectors', () => {
    expect(crc16ccitt('123456789')).toBe(0x29b1);
    expect(crc16ccitt('')).toBe(0xffff);
    // The published Pix (BR Code) example payload.
    const pix = '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304';
    expect(crcHex(pix)).toBe('1D3D');
  });

  it('encodes every tag and round-trips', () => {
    const p = encodeStaticQr({ keyValue: '@abc123defg', merchantName: 'Tienda Doña Pepa y Compañía Limitada', merchantCity: 'Bogotá', reference: 'CKABC' });
    expect(p.startsWith('000201010211')).toBe(true);
    expect(p).toContain(tlv('26', tlv('00', 'CO.BREB') + tlv('01', '@abc123defg')));
    expect(p).toContain('52040000530317058' + '02CO');
    expect(p).toMatch(/6304[0-9A-F]{4}$/);
    const d = decodeQr(p);
    expect(d.crcValid).toBe(true);
    expect(d.keyValue).toBe('@abc123defg');
    expect(d.gui).toBe('CO.BREB');
    expect(d.reference).toBe('CKABC');
    expect(d.fields['59']).toBe('Tienda Dona Pepa y Compan');
    expect(d.fields['59']!.length).toBeLessThanOrEqual(25);
    expect(d.fields['60']).toBe('Bogota');
    expect(d.fields['53']).toBe('170');
    expect(d.fields['58']).toBe('CO');
    expect(parseTlv(p).map((f) => f.tag)).toEqual(['00', '01', '26', '52', '53', '58', '59', '60', '62', '63']);
  });

  it('detects a corrupted payload', () => {
    const p = encodeStaticQr({ keyValue: '@abcdef', merchantName: 'X', merchantCity: 'Cali', reference: 'R1' });
    const bad = p.replace('@abcdef', '@abcdeg');
    expect(decodeQr(bad).crcValid).toBe(false);
    expect(() => parseTlv('0002')).toThrow();
  });

  it('text is printable ASCII, trimmed and cut', () => {
    expect(emvText('  Ñandú  \n café ', 25)).toBe('Nandu cafe');
    expect(emvText('a'.repeat(30), 25)).toHaveLength(25);
    expect(() => tlv('59', '')).toThrow();
  });

  describe('the dynamic QR of a cobro (point of initiation 12)', () => {
    const expiresAt = new Date('2026-12-01T15:04:05.678Z');
    const base = {
      keyValue: '@cobro12345',
      merchantName: 'Ferretería El Tornillo S.A.S.',
      merchantCity: 'Medellín',
      transactionId: 'TX-2026-000123',
      expiresAt,
    };

    it('writes 01=12, the key in template 26, the amount in 54, the transaction id in 62/05 and the expiry in template 80', () => {
      const p = encodeDynamicQr({ ...base, amountCents: 1_500_050n });
      expect(parseTlv(p).map((f) => f.tag)).toEqual(['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '80', '63']);
      const d = decodeQr(p);
      expect(d.crcValid).toBe(true);
      expect(d.pointOfInitiation).toBe('12');
      expect(d.keyValue).toBe('@cobro12345');
      expect(d.gui).toBe('CO.BREB');
      expect(d.amount).toBe('15000.50');
      expect(d.reference).toBe('TX-2026-000123');
      expect(d.expiry).toBe('20261201150405');
      expect(d.fields['80']).toBe(tlv('00', 'CO.BREB') + tlv('01', '20261201150405'));
      expect(d.fields['59']).toBe('Ferreteria El Tornillo S.');
      expect(d.fields['60']).toBe('Medellin');
    });

    it('omits tag 54 without an amount (the payer types it)', () => {
      const p = encodeDynamicQr(base);
      expect(decodeQr(p)).toMatchObject({ crcValid: true, amount: null, pointOfInitiation: '12' });
      expect(parseTlv(p).map((f) => f.tag)).not.toContain('54');
    });

    it('amounts are pesos with two decimals; the expiry is UTC', () => {
      expect(emvAmount(1n)).toBe('0.01');
      expect(emvAmount(100n)).toBe('1.00');
      expect(emvAmount(123_456_789n)).toBe('1234567.89');
      expect(() => emvAmount(0n)).toThrow();
      expect(() => emvAmount(100_000_000_000_000n)).toThrow();
      expect(emvUtcStamp(new Date('2026-01-02T03:04:05-05:00'))).toBe('20260102080405');
      expect(() => encodeDynamicQr({ ...base, transactionId: 'x'.repeat(36) })).toThrow();
      expect(() => encodeDynamicQr({ ...base, transactionId: 'ñ' })).toThrow();
    });

    it('an independent EMVCo parser (promptparse, strict: CRC checked) reads the same fields', () => {
      for (const amountCents of [1_500_050n, null]) {
        const p = encodeDynamicQr({ ...base, amountCents });
        const qr = parseEmvco(p, true, true);
        expect(qr).not.toBeNull();
        expect(qr!.validate('63')).toBe(true);
        expect(qr!.getTagValue('00')).toBe('01');
        expect(qr!.getTagValue('01')).toBe('12');
        expect(qr!.getTagValue('26', '00')).toBe('CO.BREB');
        expect(qr!.getTagValue('26', '01')).toBe('@cobro12345');
        expect(qr!.getTagValue('53')).toBe('170');
        expect(qr!.getTagValue('54')).toBe(amountCents === null ? undefined : '15000.50');
        expect(qr!.getTagValue('62', '05')).toBe('TX-2026-000123');
        expect(qr!.getTagValue('80', '00')).toBe('CO.BREB');
        expect(qr!.getTagValue('80', '01')).toBe('20261201150405');
        // One character changed: its CRC no longer checks, and strict parsing refuses it.
        const bad = p.replace('TX-2026-000123', 'TX-2026-000124');
        expect(parseEmvco(bad, true, true)).toBeNull();
      }
      // The static QR passes the same parser.
      const s = encodeStaticQr({ keyValue: '@abcdef', merchantName: 'X', merchantCity: 'Cali', reference: 'R1' });
      expect(parseEmvco(s, true, true)?.getTagValue('01')).toBe('11');
    });
  });
});
