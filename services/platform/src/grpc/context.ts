import { Metadata } from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import type { MeshIdentity } from '../mesh/identity.js';
import type { CallerPrincipal, CompanyProfileClaims } from '../mesh/caller-context.js';
import { AppError } from '../errors/catalogue.js';

/**
 * Who is calling, carried in gRPC metadata across every hop. The company id is set by the
 * gateway after authentication and forwarded by services; handlers take it from here, never
 * from a request body (ARCHITECTURE rule 5: company isolation is structural).
 */
export interface CallContext {
  requestId: string;
  companyId?: string;
  apiKeyId?: string;
  /** Free-form audit actor: `apikey:<id>`, `admin`, `user:<id>`, `service:<name>`. */
  actor?: string;
  /** Server side only: the mesh identity of the calling process (its client certificate), never from metadata. */
  caller?: MeshIdentity;
  /**
   * Who the request is for. Client side (the gateway): signed into the caller context. Server side:
   * only as verified from that signature (gateway calls), never from a request body or bare metadata.
   */
  principal?: CallerPrincipal;
}

const KEYS = { requestId: 'x-request-id', companyId: 'x-company-id', apiKeyId: 'x-api-key-id', actor: 'x-actor' } as const;

export function contextToMetadata(ctx: CallContext, md: Metadata = new Metadata()): Metadata {
  md.set(KEYS.requestId, ctx.requestId);
  if (ctx.companyId) md.set(KEYS.companyId, ctx.companyId);
  if (ctx.apiKeyId) md.set(KEYS.apiKeyId, ctx.apiKeyId);
  if (ctx.actor) md.set(KEYS.actor, ctx.actor);
  return md;
}

export function contextFromMetadata(md: Metadata): CallContext {
  const get = (k: string): string | undefined => {
    const v = md.get(k)[0];
    return typeof v === 'string' && v.length > 0 ? v : undefined;
  };
  const ctx: CallContext = { requestId: get(KEYS.requestId) ?? randomUUID() };
  const companyId = get(KEYS.companyId);
  const apiKeyId = get(KEYS.apiKeyId);
  const actor = get(KEYS.actor);
  if (companyId) ctx.companyId = companyId;
  if (apiKeyId) ctx.apiKeyId = apiKeyId;
  if (actor) ctx.actor = actor;
  return ctx;
}

/**
 * The company profile of the signed caller context (an API key's, or a dashboard user's when the
 * gateway put one there): what a service applies the company's rules with (tax regime, name on
 * e-mails and receipts). A method that needs it, called without it, is a gateway wiring error,
 * never the client's: CALLER_NOT_ALLOWED rather than a silent default (no IVA, no name).
 */
export function callerProfile(ctx: CallContext): CompanyProfileClaims {
  const p = ctx.principal;
  const profile = p?.kind === 'apikey' || p?.kind === 'user' ? p.profile : undefined;
  if (!profile) throw new AppError('CALLER_NOT_ALLOWED');
  return profile;
}
