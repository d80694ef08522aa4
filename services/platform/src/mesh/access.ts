import type { MeshIdentity } from './identity.js';

/**
 * Which identities may call each method of a service: one entry per RPC (the type makes a
 * missing one a compile error), checked on every call before the handler runs. A method no
 * other process needs is simply not granted; nobody is trusted by network position.
 */
export type AccessPolicy<S> = {
  readonly [K in keyof S as string extends K ? never : K]: readonly MeshIdentity[];
};
