import { pathForLog } from '@wallet/platform';

describe('pathForLog', () => {
  it('keeps ids and route words, masks phone/document numbers and e-mails in any segment', () => {
    expect(pathForLog('/wallets/transactions/0b6f3c8e-1234-4567-8901-234567890123')).toBe('/wallets/transactions/0b6f3c8e-1234-4567-8901-234567890123');
    expect(pathForLog('/breb/collect-keys/bkey_abc123/qr')).toBe('/breb/collect-keys/bkey_abc123/qr');
    expect(pathForLog('/breb/collect-keys/ext:cliente-1')).toBe('/breb/collect-keys/ext:cliente-1');
    expect(pathForLog('/breb/collect-keys/ext:1045678912')).toBe('/breb/collect-keys/ext:******8912');
    expect(pathForLog('/transfers/keys/3001234567')).toBe('/transfers/keys/******4567');
    expect(pathForLog('/x/juana.perez%40correo.com')).toBe('/x/j***@correo.com');
  });
});
