// The SSRF guard for endpoint URLs (address rules + DNS): network-facing, so an adapter, not domain/.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { TargetRefused, type ResolvedAddress, type TargetGuard } from '../app/ports.js';

export { TargetRefused, type ResolvedAddress } from '../app/ports.js';

/**
 * SSRF rules for endpoint URLs. In strict (production) mode a URL must be https and its host must
 * not be, or resolve to, a loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 — the
 * cloud metadata address — fe80::/10), CGNAT (100.64/10), unspecified, multicast, reserved or
 * documentation address. Checked when an endpoint is created or changed, and again before each
 * delivery, which then connects to the address that was checked (no second DNS answer: rebinding).
 */

const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv6');

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedIpv4(addr: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:0:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(addr);
  if (hex) {
    const a = parseInt(hex[1]!, 16);
    const b = parseInt(hex[2]!, 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  return undefined;
}

/** True for an address no production webhook may reach. */
export function isBlockedAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0]!;
  const family = isIP(bare);
  if (family === 4) return BLOCKED.check(bare, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(bare);
    if (v4) return BLOCKED.check(v4, 'ipv4');
    return BLOCKED.check(bare, 'ipv6');
  }
  return true; // not an address at all
}

export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) => {
  const r = await lookup(host, { all: true, verbatim: true });
  return r.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface TargetRules {
  /** Production rules (https only, public addresses only). */
  strict: boolean;
}

/** The URL's shape (no DNS): absolute http(s), no credentials, https when strict. Returns the parsed URL. */
export function checkUrlShape(raw: string, rules: TargetRules): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('Debe ser una URL absoluta.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TargetRefused('Debe ser una URL https.');
  if (rules.strict && url.protocol !== 'https:') throw new TargetRefused('Debe ser una URL https.');
  if (url.username || url.password) throw new TargetRefused('La URL no puede llevar credenciales.');
  if (!url.hostname) throw new TargetRefused('La URL no tiene host.');
  if (url.hash) throw new TargetRefused('La URL no puede llevar un fragmento (#).');
  return url;
}

/**
 * Resolves the URL's host and, when strict, refuses it unless every address is public. Returns the
 * address to connect to (pinned for the request).
 */
export async function resolveTarget(url: URL, rules: TargetRules, resolver: Resolver): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  let addrs: ResolvedAddress[];
  if (literal) {
    addrs = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    if (rules.strict && (host === 'localhost' || host.endsWith('.localhost')))
      throw new TargetRefused('El destino no puede ser una dirección local o privada.');
    try {
      addrs = await resolver(host);
    } catch {
      throw new TargetRefused('El host de la URL no se pudo resolver.');
    }
    if (addrs.length === 0) throw new TargetRefused('El host de la URL no se pudo resolver.');
  }
  if (rules.strict && addrs.some((a) => isBlockedAddress(a.address))) {
    throw new TargetRefused('El destino no puede ser una dirección local, privada, de enlace local o de metadatos.');
  }
  return addrs[0]!;
}

/** The app's TargetGuard: these rules and DNS through `resolver`. */
export class SsrfTargetGuard implements TargetGuard {
  constructor(
    private readonly rules: TargetRules,
    private readonly resolver: Resolver,
  ) {}

  get strict(): boolean {
    return this.rules.strict;
  }

  checkShape(raw: string): URL {
    return checkUrlShape(raw, this.rules);
  }

  resolve(url: URL): Promise<ResolvedAddress> {
    return resolveTarget(url, this.rules, this.resolver);
  }
}
