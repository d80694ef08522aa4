import type { MeshIdentity } from './identity.js';

/**
 * Which identities may call each method of a service: one entry per RPC (the type makes a
 * missing one a compile error), checked on every call before the handler runs. A method no
 * other process needs is simply not granted; nobody is trusted by network position.
 */
export type AccessPolicy<S> = {
  readonly [K in keyof S as string extends K ? never : K]: readonly AccessEntry[];
};

/**
 * A calling identity. Calls from the gateway always carry a signed caller context, and the company
 * comes only from it; the entry says for whom the gateway may call: `gateway` for a company (an API
 * key or a dashboard user), `gateway:admin` for an operator, `gateway:callback` for an
 * unauthenticated request (a provider callback, verified by its own signature in the service; the
 * public receipt verification, which finds only what its number and hash name). Calls between services carry the company
 * in metadata, which the allow-list makes the calling service answerable for.
 */
export type AccessEntry = MeshIdentity | 'gateway:admin' | 'gateway:callback';

export function entryIdentity(e: AccessEntry): MeshIdentity {
  return e === 'gateway:admin' || e === 'gateway:callback' ? 'gateway' : e;
}

/** The principal kinds an entry list admits on a gateway call. */
export function principalKinds(entries: readonly AccessEntry[]): Set<'apikey' | 'user' | 'admin' | 'callback'> {
  const kinds = new Set<'apikey' | 'user' | 'admin' | 'callback'>();
  for (const e of entries) {
    if (e === 'gateway') {
      kinds.add('apikey');
      kinds.add('user');
    }
    if (e === 'gateway:admin') kinds.add('admin');
    if (e === 'gateway:callback') kinds.add('callback');
  }
  return kinds;
}
