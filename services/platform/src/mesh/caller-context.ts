import { createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
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
  const profile = (x: CompanyProfileClaims): Claims['p'] => [
    x.nit,
    x.name,
    x.ivaApplicable,
    x.multiSigThreshold,
    String(x.counterpartyDailyLimitCents),
    String(x.counterpartyMonthlyLimitCents),
  ];
  switch (p.kind) {
    case 'apikey':
      return { k: 'apikey', co: p.companyId, key: p.keyId, scope: p.scope, p: profile(p.profile) };
    case 'user':
      return { k: 'user', co: p.companyId, uid: p.userId, email: p.email, role: p.role, ...(p.profile ? { p: profile(p.profile) } : {}) };
    case 'admin':
      return { k: 'admin', op: p.operator, ...(p.companyId ? { co: p.companyId } : {}) };
    case 'callback':
      return { k: 'callback' };
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
    return {
      nit,
      name,
      ivaApplicable: iva,
      multiSigThreshold: msig as number,
      counterpartyDailyLimitCents: BigInt(daily),
      counterpartyMonthlyLimitCents: BigInt(monthly),
    };
  };
  switch (c.k) {
    case 'apikey': {
      const scope = c.scope;
      if (scope !== 'READ' && scope !== 'WRITE') throw new Error('bad scope');
      return { kind: 'apikey', companyId: str(c.co), keyId: str(c.key), scope, profile: profile() };
    }
    case 'user':
      return {
        kind: 'user',
        companyId: str(c.co),
        userId: str(c.uid),
        email: str(c.email),
        role: str(c.role),
        ...(c.p !== undefined ? { profile: profile() } : {}),
      };
    case 'admin':
      return { kind: 'admin', operator: str(c.op), ...(c.co !== undefined ? { companyId: str(c.co) } : {}) };
    case 'callback':
      return { kind: 'callback' };
    default:
      throw new Error('bad kind');
  }
}

/** How long the gateway reuses a principal's signed context, and how many it keeps. */
const REUSE_SECONDS = 30;
const CACHE_ENTRIES = 10_000;

/** Drops the oldest entries (a Map iterates in insertion order) once it holds more than `max`. */
function trim<K, V>(m: Map<K, V>, max: number): void {
  if (m.size <= max) return;
  for (const k of m.keys()) {
    m.delete(k);
    if (m.size <= max) return;
  }
}

/**
 * The gateway's half: signs a principal's context. One token serves every request of the same
 * principal (the same claims) for `REUSE_SECONDS`, then a new one is signed: Ed25519 costs about
 * 0.25 ms of CPU per signature on our nodes, and the services verify a token once (see the
 * verifier's cache). A token still lives `ttlSeconds` from its signature, so a reused one has at
 * least `ttlSeconds − REUSE_SECONDS` left, beyond any unary deadline. It names no request: the
 * request id travels in `x-request-id`. A change of principal (another key, role or profile) is
 * other claims, hence another token; a revoked key is refused by the gateway before any signing.
 */
export class CallerContextSigner {
  private readonly signed = new Map<string, { token: Promise<string>; until: number }>();

  constructor(
    private readonly key: KeyObject,
    private readonly ttlSeconds = 120,
    private readonly now: () => number = Date.now,
  ) {}

  sign(principal: CallerPrincipal): Promise<string> {
    const claims = toClaims(principal);
    const id = JSON.stringify(claims);
    const now = this.now();
    const hit = this.signed.get(id);
    if (hit && hit.until > now) return hit.token;
    const token = new SignJWT(claims as unknown as Record<string, unknown>)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'wallet-caller+jwt' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setJti(randomUUID())
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(now / 1000) + this.ttlSeconds)
      .sign(this.key);
    this.signed.delete(id);
    this.signed.set(id, { token, until: now + REUSE_SECONDS * 1000 });
    token.catch(() => this.signed.delete(id));
    trim(this.signed, CACHE_ENTRIES);
    return token;
  }
}

/**
 * The services' half: verifies signature, issuer, audience and expiry (30 s of clock skew), then the
 * claims' shape. A token that verified is remembered until its expiry (plus the same skew), so the
 * gateway's reused tokens are checked once per service, not once per call: a hit is the same token,
 * byte for byte, and the expiry is checked on every hit. A token that fails is never remembered.
 */
export class CallerContextVerifier {
  private readonly verified = new Map<string, { principal: CallerPrincipal; expiresAt: number }>();

  constructor(
    private readonly key: KeyObject,
    private readonly now: () => number = Date.now,
  ) {}

  async verify(token: string): Promise<CallerPrincipal> {
    const now = this.now();
    const hit = this.verified.get(token);
    if (hit) {
      if (now <= hit.expiresAt) return hit.principal;
      this.verified.delete(token);
    }
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['EdDSA'],
        clockTolerance: CLOCK_SKEW_SECONDS,
        typ: 'wallet-caller+jwt',
        currentDate: new Date(now),
      });
      const principal = deepFreeze(fromClaims(payload as Record<string, unknown>));
      if (typeof payload.exp === 'number') {
        this.verified.set(token, { principal, expiresAt: (payload.exp + CLOCK_SKEW_SECONDS) * 1000 });
        trim(this.verified, CACHE_ENTRIES);
      }
      return principal;
    } catch {
      // A bad signature, issuer, audience, type or expiry (jose), or claims of the wrong shape: never a principal.
      throw new AppError('CALLER_NOT_AUTHENTICATED');
    }
  }
}

const CLOCK_SKEW_SECONDS = 30;

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

export function loadSigningKey(file: string): KeyObject {
  return createPrivateKey(readFileSync(file));
}

export function loadVerifyKey(file: string): KeyObject {
  return createPublicKey(readFileSync(file));
}
