import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { ChainVerifier, GENESIS, GENESIS_HASH, canonicalContent, contentHash, linkHash, type JournalPosting } from './journal.js';

const posting: JournalPosting = {
  id: '0b8f1f3e-4c5d-4e6f-8a9b-0c1d2e3f4a5b',
  idempotencyKey: 'reserve:tr_1',
  requestHash: 'r1',
  kind: 'reserve',
  companyId: '5f0c9a2e-1b3d-4c5e-9f70-8a1b2c3d4e5f',
  rail: 'BREB',
  movementId: '7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d',
  holdId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
  reason: null,
  corrects: null,
  caseId: null,
  reversesPostingId: null,
  createdAt: '2026-11-30T04:05:03.123456Z',
  entries: [
    { seq: 1, account: 'wallet_available:5f0c9a2e-1b3d-4c5e-9f70-8a1b2c3d4e5f:BREB', amount: '-100500' },
    { seq: 2, account: 'wallet_pending_out:5f0c9a2e-1b3d-4c5e-9f70-8a1b2c3d4e5f:BREB', amount: '100500' },
  ],
};

describe('the journal chain (docs/journal.md)', () => {
  it('the canonical content is RFC 8785 JSON, keys sorted, amounts as strings: the text an auditor recomputes', () => {
    expect(canonicalContent(posting)).toBe(
      '{"caseId":null,"companyId":"5f0c9a2e-1b3d-4c5e-9f70-8a1b2c3d4e5f","corrects":null,"createdAt":"2026-11-30T04:05:03.123456Z",' +
        '"entries":[{"account":"wallet_available:5f0c9a2e-1b3d-4c5e-9f70-8a1b2c3d4e5f:BREB","amount":"-100500","seq":1},' +
        '{"account":"wallet_pending_out:5f0c9a2e-1b3d-4c5e-9f70-8a1b2c3d4e5f:BREB","amount":"100500","seq":2}],' +
        '"holdId":"1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d","id":"0b8f1f3e-4c5d-4e6f-8a9b-0c1d2e3f4a5b","idempotencyKey":"reserve:tr_1",' +
        '"kind":"reserve","movementId":"7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d","rail":"BREB","reason":null,"requestHash":"r1",' +
        '"reversesPostingId":null,"v":1}',
    );
    // the hashes, as any SHA-256 computes them
    const content = hash('sha256', canonicalContent(posting), 'hex');
    expect(contentHash(posting).toString('hex')).toBe(content);
    expect(linkHash(GENESIS_HASH, contentHash(posting)).toString('hex')).toBe(
      hash('sha256', Buffer.concat([Buffer.alloc(32), Buffer.from(content, 'hex')]), 'hex'),
    );
  });

  it('any change to any field or entry changes the content hash', () => {
    const text = fc.string({ maxLength: 20 });
    const field = fc.constantFrom<keyof JournalPosting>(
      'id',
      'idempotencyKey',
      'requestHash',
      'kind',
      'companyId',
      'rail',
      'movementId',
      'holdId',
      'reason',
      'corrects',
      'caseId',
      'reversesPostingId',
      'createdAt',
    );
    fc.assert(
      fc.property(field, text, (f, v) => {
        fc.pre(posting[f] !== v);
        expect(contentHash({ ...posting, [f]: v }).equals(contentHash(posting))).toBe(false);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1 }), fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), (i, amount) => {
        fc.pre(amount.toString() !== posting.entries[i]!.amount);
        const entries = posting.entries.map((e, j) => (j === i ? { ...e, amount: amount.toString() } : e));
        expect(contentHash({ ...posting, entries }).equals(contentHash(posting))).toBe(false);
      }),
    );
    // a null and the text "null" are told apart; entries reordered are another content
    expect(contentHash({ ...posting, reason: 'null' }).equals(contentHash(posting))).toBe(false);
    expect(contentHash({ ...posting, entries: [...posting.entries].reverse() }).equals(contentHash(posting))).toBe(false);
    expect(canonicalContent({ ...posting, reason: 'ñ "x" \u2028' })).toBe(canonicalize({ ...JSON.parse(canonicalContent(posting)), reason: 'ñ "x" \u2028' }));
  });

  it('the verifier walks a chain and names the first break once', () => {
    const rows = [1, 2, 3, 4].map((i) => ({ ...posting, id: `p${i}` }));
    let prev = GENESIS_HASH;
    const sealed = rows.map((p, i) => {
      const c = contentHash(p);
      prev = linkHash(prev, c);
      return { seq: BigInt(i + 1), postingId: p.id, contentHash: c, hash: prev, posting: p };
    });
    const intact = new ChainVerifier(GENESIS);
    sealed.forEach((r) => intact.feed(r));
    expect({ first: intact.first, broken: intact.broken, head: intact.head.seq }).toEqual({ first: null, broken: 0, head: 4n });

    const edited = new ChainVerifier(GENESIS);
    sealed.forEach((r, i) => edited.feed(i === 1 ? { ...r, posting: { ...r.posting, kind: 'commit' } } : r));
    expect({ first: edited.first, broken: edited.broken }).toEqual({ first: { seq: 2n, postingId: 'p2', reason: 'CONTENT_CHANGED' }, broken: 1 });

    const gap = new ChainVerifier(GENESIS);
    sealed.filter((_, i) => i !== 2).forEach((r) => gap.feed(r));
    expect(gap.first).toEqual({ seq: 3n, postingId: null, reason: 'SEQUENCE_GAP' });

    const fromThird = new ChainVerifier({ seq: 2n, hash: sealed[1]!.hash.toString('hex') });
    sealed.slice(2).forEach((r) => fromThird.feed(r));
    expect(fromThird.broken).toBe(0);
    expect(() => new ChainVerifier({ seq: 0n, hash: 'abc' })).toThrow();
  });
});
