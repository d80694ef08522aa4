import { AppError } from '../errors/catalogue.js';
import type { CompanyProfileClaims } from '../mesh/caller-context.js';
import { callerProfile } from './context.js';

const profile: CompanyProfileClaims = {
  nit: '900123456-7',
  name: 'Acme S.A.S.',
  ivaApplicable: true,
  multiSigThreshold: 0,
  counterpartyDailyLimitCents: 0n,
  counterpartyMonthlyLimitCents: 0n,
};

describe('callerProfile', () => {
  it("is the signed principal's profile, for an API key or a dashboard user that carries one", () => {
    expect(callerProfile({ requestId: 'r', principal: { kind: 'apikey', companyId: 'co', keyId: 'k', scope: 'WRITE', profile } })).toBe(profile);
    expect(callerProfile({ requestId: 'r', principal: { kind: 'user', companyId: 'co', userId: 'u', email: 'a@b.co', role: 'ADMIN', profile } })).toBe(profile);
  });

  it('refuses a call without one (never a default tax regime or name)', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return (err as AppError).code;
      }
      return undefined;
    };
    expect(code(() => callerProfile({ requestId: 'r', companyId: 'co' }))).toBe('CALLER_NOT_ALLOWED');
    expect(code(() => callerProfile({ requestId: 'r', principal: { kind: 'user', companyId: 'co', userId: 'u', email: 'a@b.co', role: 'ADMIN' } }))).toBe(
      'CALLER_NOT_ALLOWED',
    );
    expect(code(() => callerProfile({ requestId: 'r', principal: { kind: 'admin', operator: 'op', companyId: 'co' } }))).toBe('CALLER_NOT_ALLOWED');
    expect(code(() => callerProfile({ requestId: 'r', principal: { kind: 'callback' } }))).toBe('CALLER_NOT_ALLOWED');
  });
});
