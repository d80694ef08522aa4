import { crc16ccitt, crcHex, decodeQr, emvText, encodeStaticQr, parseTlv, tlv } from './emvco.js';

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
});
