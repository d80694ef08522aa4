import { z } from 'zod';
import { isoDate, centsNumber } from '../../../http/schemas.js';

export const FeeConfigSchema = z
  .object({
    operation: z.enum(['BREB_OUTFLOW', 'ACH_OUTFLOW', 'PSE_INFLOW', 'BREB_INFLOW']),
    companyId: z.string().nullable().meta({ description: 'null: the default for every company.' }),
    fixedFeeCents: centsNumber(),
    variableBps: z.int().min(0).max(10_000),
    updatedAt: isoDate(),
  })
  .meta({ id: 'FeeConfig' });

const Hash = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .meta({ description: 'SHA-256, 64 lowercase hex digits.', example: '9f2c1e0d5b7a48c3e61d2f09a8b7c6d5e4f30112233445566778899aabbccdd' });
const Seq = z
  .string()
  .regex(/^\d{1,18}$/)
  .meta({ description: 'A position of the chain (decimal string: postings sealed up to and including it; 0 is genesis).', example: '120394' });

export const JournalHeadSchema = z
  .object({ seq: Seq, hash: Hash })
  .meta({ id: 'JournalHead', description: "A point of the journal's chain: after `seq` sealed postings its hash is `hash`." });

export const JournalVerificationSchema = z
  .object({
    ok: z.boolean().meta({
      description:
        'true: every sealed posting is as sealed, every link holds, every recorded daily head lies on the chain and no posting is outside the journal.',
    }),
    start: JournalHeadSchema.meta({ description: 'Where the verification started: genesis, or the trusted head given.' }),
    head: JournalHeadSchema.meta({ description: "The chain's last position, as stored." }),
    verified: z.int().min(0).meta({ description: 'Sealed postings checked.' }),
    pending: z.int().min(0).meta({ description: 'Committed postings queued and not yet sealed (normally 0: the sealer runs every second).' }),
    headsChecked: z.int().min(0).meta({ description: 'Recorded daily heads the chain was checked against.' }),
    firstBroken: z
      .object({
        seq: Seq,
        postingId: z.string().nullable(),
        reason: z.enum(['CONTENT_CHANGED', 'POSTING_MISSING', 'LINK_BROKEN', 'SEQUENCE_GAP', 'HEAD_MISMATCH', 'OUTSIDE_JOURNAL']).meta({
          description:
            "CONTENT_CHANGED: the posting's rows or entries were edited; POSTING_MISSING: deleted; LINK_BROKEN: the journal row itself was edited, inserted or reordered; SEQUENCE_GAP: a journal row deleted; HEAD_MISMATCH: the chain does not pass through a recorded or trusted head; OUTSIDE_JOURNAL: a posting written around the ledger (neither sealed nor queued).",
        }),
      })
      .nullable()
      .meta({ description: 'The first break found, or null.' }),
    broken: z.int().min(0).meta({ description: 'Every break found (the first is `firstBroken`).' }),
    outsideJournal: z.array(z.string()).meta({ description: 'Postings neither sealed nor queued (at most 20).' }),
    durationMs: z.int().min(0),
  })
  .meta({ id: 'JournalVerification' });
