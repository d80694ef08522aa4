import { INSTANT_EXAMPLE, INSTANT_PATTERN } from '@wallet/platform';
import { z } from 'zod';

/**
 * Response shapes of the public API, as zod schemas: they feed the OpenAPI document (components)
 * and the integration tests validate real answers against them, so docs and behaviour agree.
 * Schemas with an `id` become `#/components/schemas/<id>`.
 */

export const FieldProblemSchema = z
  .object({
    path: z.string().meta({
      description:
        'Where the problem is, one style everywhere: a body field by its dotted path from the body (`amount`, `destination.brebKey.value`, `items.3`; "" for the whole body), a query parameter as `query.<name>` (`query.limit`, `query.cursor`), a path parameter as `params.<name>`, a header by its name (`Idempotency-Key`).',
    }),
    message: z.string().meta({ description: 'What is wrong, in Spanish.' }),
  })
  .meta({ id: 'FieldProblem' });

export const ErrorSchema = z
  .object({
    error: z.string().meta({ description: 'UPPER_SNAKE_CASE code from the error catalogue.', example: 'INVALID_REQUEST' }),
    message: z.string().meta({ description: 'Human-readable message, in Spanish.' }),
    details: z.record(z.string(), z.unknown()).optional().meta({
      description:
        'Optional. For INVALID_REQUEST (and VALIDATION_ERROR naming fields): `{ fields: [{ path, message }] }`, `message` in Spanish. One style of `path` everywhere: a body field by its dotted path from the body (`amount`, `destination.brebKey.value`, `items.3`; "" for the whole body), a query parameter as `query.<name>` (`query.limit`, `query.cursor`), a path parameter as `params.<name>`, a header by its name (`Idempotency-Key`).',
    }),
  })
  .meta({
    id: 'Error',
    description:
      'Every error answer. 429 adds `retryAfter`; 403 INSUFFICIENT_SCOPE adds `required` and `granted`; 423 ACCOUNT_LOCKED carries `details.retryAfter` (seconds, as the Retry-After header).',
  });

export const RateLimitErrorSchema = z
  .object({
    error: z.literal('RATE_LIMIT_EXCEEDED'),
    message: z.string(),
    retryAfter: z.int().min(0).max(86_400).meta({ description: 'Seconds to wait (same as the Retry-After header).' }),
  })
  .meta({ id: 'RateLimitError' });

export const ScopeErrorSchema = z
  .object({
    error: z.literal('INSUFFICIENT_SCOPE'),
    message: z.string(),
    required: z.enum(['READ', 'WRITE']),
    granted: z.enum(['READ', 'WRITE']),
  })
  .meta({ id: 'InsufficientScopeError' });

/**
 * An instant the API returns: RFC 3339 in UTC with six fraction digits (docs/decisions.md), written
 * by the platform's formatInstant. `instant()` also states the pattern: the journal's instants
 * (movements, statements, balance history), exact to the microsecond, each a valid bound.
 */
export const isoDate = () => z.string().meta({ format: 'date-time', example: INSTANT_EXAMPLE });
export const instant = () => z.string().meta({ format: 'date-time', pattern: INSTANT_PATTERN, example: INSTANT_EXAMPLE });
export const centsString = () =>
  z
    .string()
    .regex(/^-?\d+$/)
    .meta({ description: 'Centavos as a decimal string (big-integer safe).' });

/**
 * The largest amount any send can carry: the ACH individual cap (reference §limits: 200,000,000,000
 * centavos = 2,000 million COP; BREB's is 1,200,000,000). Requests above a rail's cap answer 422.
 */
export const MAX_TRANSFER_CENTS = 200_000_000_000;

/** A count of things in an answer (items, lines, signatures): a non-negative integer. */
export const count = () => z.int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * Centavos in an answer as a JSON integer, where the reference types them as numbers: never
 * negative, at most `max` (default: what a JSON number holds exactly, 2^53 − 1).
 */
export const centsNumber = (max: number = Number.MAX_SAFE_INTEGER) => z.int().min(0).max(max);

/**
 * How the OpenAPI document states a request schema whose runtime check is a refinement JSON Schema
 * cannot read ("exactly one of", "required when"): as `oneOf` of its variants, each a complete,
 * closed object. The server keeps validating with the refined schema (its Spanish messages and error
 * paths are unchanged); the document (http/../openapi/document.ts) shows the variants instead.
 * A test checks both agree on a set of bodies (openapi/document.spec.ts).
 */
export const documentedVariants = new WeakMap<object, readonly z.ZodType[]>();

/** Registers `variants` as what the document shows for `schema`; returns `schema`. */
export function documentAsOneOf<S extends z.ZodType>(schema: S, variants: readonly z.ZodType[]): S {
  documentedVariants.set(schema, variants);
  return schema;
}
