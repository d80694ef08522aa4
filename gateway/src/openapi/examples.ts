import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERRORS, type ErrorCode } from '@wallet/platform';

type Json = Record<string, unknown>;

/**
 * Examples recorded from real answers: per operationId, the JSON request a test sent and got 2xx
 * for, and one JSON answer per status. Written by `npm run openapi:examples`
 * (test/scripts/record-examples.mjs, which runs the e2e suites and redacts the secrets), never by
 * hand, so the document's examples are what the server really says.
 */
export interface RecordedExamples {
  [operationId: string]: { request?: unknown; responses?: Record<string, unknown> };
}

const here = dirname(fileURLToPath(import.meta.url));
/** src/openapi/examples.json (tests) or dist/openapi/examples.json (build: scripts/copy-assets.mjs). */
export const EXAMPLES_FILE = join(here, 'examples.json');

let loaded: RecordedExamples | undefined;
/** The recorded examples (read once); none when the file is missing. */
export function recordedExamples(): RecordedExamples {
  loaded ??= existsSync(EXAMPLES_FILE) ? (JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as RecordedExamples) : {};
  return loaded;
}

/** The example of an error code as the catalogue states it (the extra fields its shape requires included). */
export function catalogueError(code: ErrorCode): Json {
  const value: Json = { error: code, message: ERRORS[code].message };
  if (code === 'RATE_LIMIT_EXCEEDED') value.retryAfter = 42;
  if (code === 'INSUFFICIENT_SCOPE') Object.assign(value, { required: 'WRITE', granted: 'READ' });
  if (code === 'ACCOUNT_LOCKED') value.details = { retryAfter: 900 };
  return value;
}

/** `#/components/examples/<name>` of an error code's catalogue example. */
const errorExampleName = (code: ErrorCode) => `Error_${code}`;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Attaches the examples to a built document, in place: the recorded request on each JSON request
 * body; the recorded answer on each non-error JSON response; on each error response (the codes the
 * operation answers with that status: `errorCodes`) one example named by its code: the recorded
 * answer when there is one (with its `details`), else the catalogue's `{ error, message }` of the
 * most specific code, through `#/components/examples`. The refusals answered before routing get
 * their code's example too.
 */
export function attachExamples(
  doc: Json,
  errorCodes: (operationId: string) => Map<number, ErrorCode[]> | undefined,
  recorded: RecordedExamples = recordedExamples(),
): void {
  const components = (doc.components ??= {}) as Json;
  const shared: Record<string, Json> = {};
  const errorRef = (code: ErrorCode): Json => {
    const name = errorExampleName(code);
    shared[name] ??= { summary: code, value: catalogueError(code) };
    return { $ref: `#/components/examples/${name}` };
  };

  for (const item of Object.values((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const operationId = op.operationId as string;
      const mine = recorded[operationId] ?? {};
      const body = jsonContent((op.requestBody as Json | undefined)?.content);
      if (body && mine.request !== undefined) body.example = mine.request;
      const byStatus = errorCodes(operationId) ?? new Map<number, ErrorCode[]>();
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        const media = jsonContent(response.content);
        if (!media) continue;
        const answered = mine.responses?.[status];
        const codes = byStatus.get(Number(status));
        if (!codes) {
          if (answered !== undefined) media.example = answered;
          continue;
        }
        // One example per error answer (the document stays small): the recorded one, else the
        // catalogue's for the operation's most specific code (its own codes come after the pipeline's).
        const answeredCode = (answered as { error?: unknown } | undefined)?.error as ErrorCode | undefined;
        if (answeredCode && codes.includes(answeredCode)) media.examples = { [answeredCode]: { summary: answeredCode, value: answered } };
        else {
          const code = codes.filter((c) => c !== 'INTERNAL_ERROR').at(-1) ?? codes[0]!;
          media.examples = { [code]: errorRef(code) };
        }
      }
    }
  }
  for (const response of Object.values((components.responses ?? {}) as Record<string, Json>)) {
    const media = jsonContent(response.content);
    const code = refusalCode(media?.schema);
    if (media && code) media.examples = { [code]: errorRef(code) };
  }
  components.examples = Object.fromEntries(Object.entries(shared).sort(([a], [b]) => a.localeCompare(b)));
}

function jsonContent(content: unknown): Json | undefined {
  return (content as Record<string, Json> | undefined)?.['application/json'];
}

/** The one code of a refusal's schema (`allOf: [Error, { properties: { error: { const } } }]`). */
function refusalCode(schema: unknown): ErrorCode | undefined {
  const parts = (schema as { allOf?: Array<{ properties?: { error?: { const?: unknown } } }> } | undefined)?.allOf ?? [];
  const code = parts.map((p) => p.properties?.error?.const).find((c) => typeof c === 'string');
  return code && code in ERRORS ? (code as ErrorCode) : undefined;
}
