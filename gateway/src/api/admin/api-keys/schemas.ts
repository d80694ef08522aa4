import { z } from 'zod';
import { isoDate } from '../../../http/schemas.js';

export const ApiKeySchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    prefix: z.string().meta({ description: 'First characters of the key, to recognise it.', example: 'wk_test_Ab3x' }),
    scope: z.enum(['READ', 'WRITE']),
    label: z.string(),
    apiVersion: z.string().meta({
      description:
        'The API version the key is pinned to: what applies when a request sends no `Wallet-Version` header (the newest version when the key was issued).',
      format: 'date',
      example: '2026-11-29',
    }),
    createdAt: isoDate(),
    lastUsedAt: isoDate().nullable(),
    revokedAt: isoDate().nullable(),
  })
  .meta({ id: 'ApiKey' });

export const CreatedApiKeySchema = z
  .object({
    id: z.string().meta({ format: 'uuid' }),
    key: z.string().optional().meta({
      description:
        "The secret key, outside production only: shown only in this answer; stored only as a hash. In production it is never in a response: it is e-mailed to the company's active dashboard administrators.",
    }),
    prefix: z.string(),
    scope: z.enum(['READ', 'WRITE']),
    label: z.string(),
    apiVersion: z.string().meta({
      description:
        'The API version the key is pinned to: what applies when a request sends no `Wallet-Version` header (the newest version when the key was issued).',
      format: 'date',
      example: '2026-11-29',
    }),
    createdAt: isoDate(),
  })
  .meta({ id: 'CreatedApiKey' });
