import { INSTANT_EXAMPLE, INSTANT_PATTERN } from '@wallet/platform';
import { z } from 'zod';

/**
 * Response shapes of the public API, as zod schemas: they feed the OpenAPI document (components)
 * and the integration tests validate real answers against them, so docs and behaviour agree.
 * Schemas with an `id` become `#/components/schemas/<id>`.
 */

export const FieldProblemSchema = z
  .object({
    path: z.string().meta({ description: 'Dotted path of the offending field ("" for the whole body).' }),
    message: z.string().meta({ description: 'What is wrong, in Spanish.' }),
  })
  .meta({ id: 'FieldProblem' });

export const ErrorSchema = z
  .object({
    error: z.string().meta({ description: 'UPPER_SNAKE_CASE code from the error catalogue.', example: 'INVALID_REQUEST' }),
    message: z.string().meta({ description: 'Human-readable message, in Spanish.' }),
    details: z.record(z.string(), z.unknown()).optional().meta({
      description: 'Optional. For INVALID_REQUEST: `{ fields: [{ path, message }] }`.',
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
    retryAfter: z.int().meta({ description: 'Seconds to wait (same as the Retry-After header).' }),
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
