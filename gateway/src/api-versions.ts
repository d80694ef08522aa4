/**
 * Versions of the HTTP API an integrator can pin (docs/api-versioning.md). A version is the date it
 * was released (`YYYY-MM-DD`); a request picks one with the `Wallet-Version` header, otherwise its API
 * key's pinned version applies (the newest version when the key was issued), otherwise (no key: admin,
 * dashboard, docs) the newest. Every answer says which version applied, in `Wallet-Version`.
 *
 * Additive changes (new operations, new optional request fields, new response fields, new enum values
 * in answers) ship in every version at once. A breaking change (openapi/breaking-changes.ts) needs a
 * new entry here that lists it by id; `breaking-changes.spec.ts` compares the served document with the
 * last released snapshot (gateway/openapi/releases/<version>.json, cut by `npm run openapi:release`)
 * and fails on a breaking change no newer entry announces. Clients pinned to an older version keep the
 * old behaviour: the handler branches on `appliedApiVersion(ctx)`.
 */
export interface ApiVersion {
  /** The release date, `YYYY-MM-DD`. */
  version: string;
  /** What changed, for the changelog (docs/api-changelog.md has a section per version). */
  summary: string;
  /** The breaking changes this version makes, by id (`<kind> <where>`, as the check prints them). */
  breaking: readonly string[];
}

/** Oldest first. Append only; a version is retired by the policy in docs/api-versioning.md, never silently. */
export const API_VERSIONS: readonly ApiVersion[] = [
  {
    version: '2026-11-29',
    summary: 'First released version: the API as documented on this date. `Wallet.type` is deprecated (use `rail`).',
    breaking: [],
  },
  {
    version: '2026-12-01',
    summary:
      "A named operator's resolution of a money exception by judgement (`write_off`, `credit`, `accept_provider`, `return`, `dismiss`, `explain`) answers 202 with an approval request that a second, independent operator approves. Every version gets it: a control a request header could opt out of would not be one.",
    breaking: ['response-success-status-added POST /admin/exceptions/{id}/resolve response 202'],
  },
];

export const LATEST_API_VERSION = API_VERSIONS[API_VERSIONS.length - 1]!.version;
export const SUPPORTED_API_VERSIONS: readonly string[] = API_VERSIONS.map((v) => v.version);

/**
 * The version a key pinned to `pinned` gets: that one while it is supported; once it is retired, the
 * oldest supported version after it (the policy's "moved forward to the oldest supported version").
 */
export function effectiveApiVersion(pinned: string | undefined, supported: readonly string[] = SUPPORTED_API_VERSIONS): string {
  const latest = supported[supported.length - 1]!;
  if (!pinned) return latest;
  if (supported.includes(pinned)) return pinned;
  return supported.find((v) => v > pinned) ?? latest;
}
