import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApiVersion } from '../api-versions.js';
import { breakingChanges, contractOf, type BreakingChange } from './breaking-changes.js';

type Json = Record<string, unknown>;

/** gateway/openapi/releases: one contract snapshot per released version (`<YYYY-MM-DD>.json`). */
export const RELEASES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'openapi', 'releases');

/** The released versions that have a snapshot, oldest first. */
export function releasedVersions(dir = RELEASES_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
}

export function readRelease(version: string, dir = RELEASES_DIR): Json {
  return JSON.parse(readFileSync(join(dir, `${version}.json`), 'utf8')) as Json;
}

/** Writes the contract of `doc` as the snapshot of `version` (keys sorted, prose removed; see `layout`). */
export function writeRelease(version: string, doc: Json, dir = RELEASES_DIR): string {
  const file = join(dir, `${version}.json`);
  writeFileSync(file, layout(contractOf(doc), '') + '\n');
  return file;
}

/** JSON with 2-space indentation, except that a value fitting in 120 columns stays on one line: half the size, diffs still read by line. */
function layout(value: unknown, indent: string): string {
  const flat = JSON.stringify(value);
  if (value === null || typeof value !== 'object' || flat.length + indent.length <= 120) return flat;
  const inner = indent + '  ';
  const entries = Array.isArray(value)
    ? value.map((v) => inner + layout(v, inner))
    : Object.entries(value as Json).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${layout(v, inner)}`);
  return Array.isArray(value) ? `[\n${entries.join(',\n')}\n${indent}]` : `{\n${entries.join(',\n')}\n${indent}}`;
}

export interface ReleaseCheck {
  /** The snapshot compared with: the newest released version. */
  last: string;
  /** Every breaking change from the last release to the served document. */
  changes: BreakingChange[];
  /** Those that no version newer than the last release announces: the check fails on any. */
  unannounced: BreakingChange[];
  /** Announced by a newer version but not in the document (a typo, or a change taken back): the check fails on any. */
  stale: string[];
}

/**
 * Compares the served document with the last released snapshot. A breaking change is allowed only
 * when a version newer than that release lists its id (`breaking`): the handler keeps the old
 * behaviour for clients pinned to older versions, and the release is cut when the version ships.
 */
export function checkAgainstRelease(served: Json, last: { version: string; doc: Json }, versions: readonly ApiVersion[]): ReleaseCheck {
  const changes = breakingChanges(last.doc, contractOf(served));
  const announced = new Set(versions.filter((v) => v.version > last.version).flatMap((v) => v.breaking));
  const found = new Set(changes.map((c) => c.id));
  return {
    last: last.version,
    changes,
    unannounced: changes.filter((c) => !announced.has(c.id)),
    stale: [...announced].filter((id) => !found.has(id)).sort(),
  };
}
