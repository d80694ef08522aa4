import { BlockList, isIP } from 'node:net';

/**
 * Resolves the client address for rate limiting (CONTRACT §7): `X-Forwarded-For` is honoured only
 * when the socket peer is a trusted proxy; then the client is the right-most address that is not a
 * trusted proxy. Anything a client could forge (the left part of the header) is never believed
 * past an untrusted hop. The list (TRUSTED_PROXIES) is loopback by default outside production and
 * empty in production: only the ingress controller's own addresses belong in it, since any peer in
 * it can claim any client IP and so reset its per-IP limits (docs/security.md "Operator lockouts and trusted proxies").
 */
export class ClientIpResolver {
  private readonly trusted = new BlockList();
  private readonly empty: boolean;

  constructor(cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const [addr, bits] = cidr.split('/') as [string, string | undefined];
      const family = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
      if (bits === undefined) this.trusted.addAddress(addr, family);
      else this.trusted.addSubnet(addr, Number(bits), family);
    }
    this.empty = cidrs.length === 0;
  }

  isTrusted(address: string): boolean {
    if (this.empty) return false;
    const family = isIP(address);
    if (family === 0) return false;
    return this.trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }

  resolve(peer: string | undefined, forwardedFor: string | string[] | undefined): string {
    const socketAddr = normalize(peer ?? '') || 'unknown';
    if (!forwardedFor || !this.isTrusted(socketAddr)) return socketAddr;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h.length > 0);
    let client = socketAddr;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalize(hops[i]!);
      // A malformed entry cannot be attributed: stop at the last address a trusted proxy vouched for.
      if (!hop) return client;
      client = hop;
      if (!this.isTrusted(hop)) return hop;
    }
    return client;
  }
}

/** Canonical text of an address: IPv4-mapped IPv6 → IPv4, brackets/ports/zone dropped; '' when not an IP. */
export function normalize(raw: string): string {
  let s = raw.trim();
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end < 0) return '';
    s = s.slice(1, end);
  } else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(s)) {
    s = s.slice(0, s.lastIndexOf(':'));
  }
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const lower = s.toLowerCase();
  if (lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4) return lower.slice(7);
  return isIP(lower) ? lower : '';
}
