import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT, jwtVerify } from 'jose';
import { AppError } from '../errors/catalogue.js';

/**
 * The signed caller context: who an API request is for, as the gateway authenticated it, carried
 * to the services as a short-lived JWT (EdDSA, RFC 8037) in the `x-caller-context` metadata entry.
 * Services verify it with the gateway's public key and take the company, the role and the company
 * profile only from it, never from a request body or a bare metadata entry; a method that needs an
 * operator needs an `admin` principal in it, never "admin when the company is absent".
 */
export const CALLER_CONTEXT_METADATA = 'x-caller-context';
const ISSUER = 'wallet-gateway';
const AUDIENCE = 'wallet-services';

/** What the services need of a company to apply its rules (fees, limits, approvals, AML, receipts). */
export interface CompanyProfileClaims {
  nit: string;
  name: string;
  ivaApplicable: boolean;
  multiSigThreshold: number;
  counterpartyDailyLimitCents: bigint;
  counterpartyMonthlyLimitCents: bigint;
}

export type CallerPrincipal =
  /** An API key of a company. */
  | { kind: 'apikey'; companyId: string; keyId: string; scope: 'READ' | 'WRITE'; profile: CompanyProfileClaims }
  /** A dashboard user of a company (a session). */
  | { kind: 'user'; companyId: string; userId: string; email: string; role: string; profile?: CompanyProfileClaims }
  /** An operator (or the development/bootstrap token), acting on `companyId` when the route names one. */
  | { kind: 'admin'; operator: string; companyId?: string }
  /** A provider callback the gateway forwards unauthenticated (the service checks the provider's signature): no company, no operator. */
  | { kind: 'callback'; companyId?: undefined };

interface Claims {
  k: CallerPrincipal['kind'];
  co?: string;
  key?: string;
  scope?: string;
  uid?: string;
  email?: string;
  role?: string;
  op?: string;
  /** profile: [nit, name, ivaApplicable, multiSigThreshold, daily limit, monthly limit] (bigints as strings). */
  p?: [string, string, boolean, number, string, string];
}

function toClaims(p: CallerPrincipal): Claims {
  const profile = (x: CompanyProfileClaims): Claims['p'] => [x.nit, x.name, x.ivaApplicable, x.multiSigThreshold, String(x.counterpartyDailyLimitCents), String(x.counterpartyMonthlyLimitCents)];
  switch (p.kind) {
    case 'apikey': return { k: 'apikey', co: p.companyId, key: p.keyId, scope: p.scope, p: profile(p.profile) };
    case 'user': return { k: 'user', co: p.companyId, uid: p.userId, email: p.email, role: p.role, ...(p.profile ? { p: profile(p.profile) } : {}) };
    case 'admin': return { k: 'admin', op: p.operator, ...(p.companyId ? { co: p.companyId } : {}) };
    case 'callback': return { k: 'callback' };
  }
}

const str = (v: unknown): string => {
  if (typeof v !== 'string' || v.length === 0 || v.length > 200) throw new Error('bad claim');
  return v;
};

function fromClaims(c: Record<string, unknown>): CallerPrincipal {
  const profile = (): CompanyProfileClaims => {
    const p = c.p;
    if (!Array.isArray(p) || p.length !== 6) throw new Error('bad profile');
    const [nit, name, iva, msig, daily, monthly] = p as unknown[];
    if (typeof nit !== 'string' || typeof name !== 'string' || typeof iva !== 'boolean' || !Number.isInteger(msig)) throw new Error('bad profile');
    if (typeof daily !== 'string' || typeof monthly !== 'string' || !/^\d{1,19}$/.test(daily) || !/^\d{1,19}$/.test(monthly)) throw new Error('bad profile');
    return { nit, name, ivaApplicable: iva, multiSigThreshold: msig as number, counterpartyDailyLimitCents: BigInt(daily), counterpartyMonthlyLimitCents: BigInt(monthly) };
  };
  switch (c.k) {
    case 'apikey': {
      const scope = c.scope;
      if (scope !== 'READ' && scope !== 'WRITE') throw new Error('bad scope');
      return { kind: 'apikey', companyId: str(c.co), keyId: str(c.key), scope, profile: profile() };
    }
    case 'user': return { kind: 'user', companyId: str(c.co), userId: str(c.uid), email: str(c.email), role: str(c.role), ...(c.p !== undefined ? { profile: profile() } : {}) };
    case 'admin': return { kind: 'admin', operator: str(c.op), ...(c.co !== undefined ? { companyId: str(c.co) } : {}) };
    case 'callback': return { kind: 'callback' };
    default: throw new Error('bad kind');
  }
}

/** The gateway's half: signs a principal for one request (the token outlives the longest gRPC deadline, no more). */
export class CallerContextSigner {
  constructor(private readonly key: KeyObject, private readonly ttlSeconds = 120) {}

  sign(principal: CallerPrincipal, requestId: string): Promise<string> {
    return new SignJWT(toClaims(principal) as unknown as Record<string, unknown>)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'wallet-caller+jwt' })
      .setIssuer(ISSUER).setAudience(AUDIENCE).setJti(requestId)
      .setIssuedAt().setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.key);
  }
}

/** The services' half: verifies signature, issuer, audience and expiry (30 s of clock skew), then the claims' shape. */
export class CallerContextVerifier {
  constructor(private readonly key: KeyObject) {}

  async verify(token: string): Promise<CallerPrincipal> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['EdDSA'], clockTolerance: 30, typ: 'wallet-caller+jwt' });
      return fromClaims(payload as Record<string, unknown>);
    } catch {
      // A bad signature, issuer, audience, type or expiry (jose), or claims of the wrong shape: never a principal.
      throw new AppError('CALLER_NOT_AUTHENTICATED');
    }
  }
}

export function loadSigningKey(file: string): KeyObject {
  return createPrivateKey(readFileSync(file));
}

export function loadVerifyKey(file: string): KeyObject {
  return createPublicKey(readFileSync(file));
}
