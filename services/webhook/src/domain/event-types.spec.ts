import {
  companyEventsV1,
  counterpartyEventsV1,
  depositEventsV1,
  ledgerV1,
  policyEventsV1,
  scheduleEventsV1,
  transferEventsV1,
  walletEventsV1,
} from '@wallet/proto';
import { batchToApi, counterpartyView } from '@wallet/platform';
import { eventBody, isWebhookEventType, mapSourceEvent, webhookEventId } from './event-types.js';

describe('internal events → public webhook events', () => {
  const now = new Date('2026-11-21T10:00:00.000Z');
  const transfer = (extra: Partial<transferEventsV1.TransferEvent> = {}) =>
    transferEventsV1.TransferEvent.toJSON(
      transferEventsV1.TransferEvent.fromPartial({
        eventId: 'e1',
        transferId: 't1',
        companyId: 'c1',
        rail: 'RAIL_ACH' as never,
        status: 'MOVEMENT_STATUS_COMPLETED' as never,
        amount: 100_000n,
        totalFee: 300n,
        ivaAmount: 57n,
        netAmount: 100_000n,
        targetName: 'Ana',
        targetDocument: '1',
        createdAt: now,
        occurredAt: now,
        ...extra,
      }),
    );

  it('maps a transfer event to the same type with a stable id and the API shape', () => {
    const [e, ...rest] = mapSourceEvent({ id: 'src-1', subject: 'transfer.completed', payload: transfer({ bankAccountNumberMasked: '****8901' }) });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      type: 'transfer.completed',
      companyId: 'c1',
      resourceKey: 'transfer:t1',
      id: webhookEventId('src-1', 'transfer.completed'),
      createdAt: now,
    });
    expect(e!.id).toBe(mapSourceEvent({ id: 'src-1', subject: 'transfer.completed', payload: transfer() })[0]!.id);
    expect(e!.data).toMatchObject({
      id: 't1',
      status: 'COMPLETED',
      rail: 'ACH',
      amount: 100_000,
      totalFee: 300,
      ivaAmount: 57,
      currency: 'COP',
      bankAccountNumberMasked: '****8901',
      reference: null,
    });
    expect(JSON.parse(eventBody(e!))).toEqual({ id: e!.id, type: 'transfer.completed', createdAt: '2026-11-21T10:00:00.000000Z', data: e!.data });
  });

  it('carries the approval of a multi-signature send', () => {
    const [e] = mapSourceEvent({
      id: 'src-2',
      subject: 'transfer.awaiting_approval',
      payload: transfer({ status: 'MOVEMENT_STATUS_AWAITING_APPROVAL' as never, approvalId: 'ap1', approvalThreshold: 2, approvalExpiresAt: now } as never),
    });
    expect(e!.data).toMatchObject({ status: 'AWAITING_APPROVAL', approvalId: 'ap1', threshold: 2, expiresAt: '2026-11-21T10:00:00.000000Z' });
    expect(e!.data).toMatchObject({ approvalRoles: ['ADMIN', 'OPERATOR'], policyDecision: null });
  });

  it('carries what the approval policy decided, and the roles its approval counts (docs/policies.md)', () => {
    const [e] = mapSourceEvent({
      id: 'src-2b',
      subject: 'transfer.awaiting_approval',
      payload: transfer({
        status: 'MOVEMENT_STATUS_AWAITING_APPROVAL' as never,
        approvalId: 'ap2',
        approvalThreshold: 3,
        approvalExpiresAt: now,
        approvalRoles: ['ADMIN'],
        policyDecision: { policyVersion: 4, ruleId: 'huge', action: 'REQUIRE_APPROVALS', approvals: 3, roles: ['ADMIN'] },
      } as never),
    });
    expect(e!.data).toMatchObject({
      threshold: 3,
      approvalRoles: ['ADMIN'],
      policyDecision: { policyVersion: 4, ruleId: 'huge', action: 'REQUIRE_APPROVALS', approvals: 3, roles: ['ADMIN'] },
    });
  });

  it('a rejected multi-signature send is also transfer.failed (its final state), with its own stable id', () => {
    const out = mapSourceEvent({
      id: 'src-3',
      subject: 'transfer.rejected',
      payload: transfer({ status: 'MOVEMENT_STATUS_FAILED' as never, errorMessage: 'Rechazada', rejectedBy: 'a@b.co' }),
    });
    expect(out.map((e) => e.type)).toEqual(['transfer.rejected', 'transfer.failed']);
    expect(out[1]!.id).toBe(webhookEventId('src-3', 'transfer.failed'));
    expect(out[1]!.data).toMatchObject({ id: 't1', status: 'FAILED' });
  });

  it('issue 35 #12: batch.completed data is the batch exactly as GET /transfers/batches/{id} shows it, its approval included', () => {
    const batch = {
      id: 'b1',
      state: 'FAILED',
      mode: 'ALL',
      source: 'JSON',
      reference: 'NOM-11',
      itemCount: 2,
      validCount: 2,
      invalidCount: 0,
      totals: [{ rail: 'RAIL_BREB' as never, count: 2, amount: 30_000n, totalFee: 200n, ivaAmount: 38n, total: 30_238n }],
      byStatus: [{ status: 'FAILED', count: 2, amount: 30_000n }],
      finishedCount: 2,
      createdAt: now,
      expiresAt: now,
      executedAt: now,
      completedAt: now,
      threshold: 2,
      approvalId: 'ap1',
      errorMessage: 'Rechazado',
      approval: {
        approvalId: 'ap1',
        threshold: 2,
        status: 'REJECTED',
        signatures: [{ userId: 'u1', email: 'a@b.co', role: 'ADMIN', signedAt: now }],
        createdAt: now,
        expiresAt: now,
        decidedAt: now,
        rejectReason: 'No',
        rejectedBy: 'b@b.co',
      },
    };
    const payload = transferEventsV1.BatchEvent.toJSON(transferEventsV1.BatchEvent.fromPartial({ eventId: 'be', companyId: 'c1', batch, occurredAt: now }));
    const [e] = mapSourceEvent({ id: 'src-b', subject: 'transfer.batch_completed', payload });
    const t = now.toISOString().replace('Z', '000Z'); // instants on the wire carry six fraction digits (docs/decisions.md)
    expect(e).toMatchObject({ type: 'batch.completed', resourceKey: 'batch:b1' });
    expect(e!.data).toEqual({
      id: 'b1',
      status: 'FAILED',
      reference: 'NOM-11',
      description: null,
      mode: 'all',
      source: 'json',
      itemCount: 2,
      validCount: 2,
      invalidCount: 0,
      totals: [{ rail: 'BREB', count: 2, amount: 30_000, totalFee: 200, ivaAmount: 38, total: 30_238 }],
      byStatus: [{ status: 'FAILED', count: 2, amount: 30_000 }],
      progress: { finished: 2, total: 2, percent: 100 },
      createdAt: t,
      expiresAt: t,
      executedAt: t,
      completedAt: t,
      cancelledAt: null,
      approvalId: 'ap1',
      threshold: 2,
      approval: {
        approvalId: 'ap1',
        threshold: 2,
        status: 'REJECTED',
        signatures: [{ userId: 'u1', email: 'a@b.co', role: 'ADMIN', signedAt: t }],
        createdAt: t,
        expiresAt: t,
        decidedAt: t,
        rejectReason: 'No',
        rejectedBy: 'b@b.co',
      },
      errorMessage: 'Rechazado',
    });
    // The very builder of the GET answer.
    expect(e!.data).toEqual(batchToApi(transferEventsV1.BatchEvent.fromJSON(payload).batch!));
  });

  it('gives nothing for internal-only subjects', () => {
    expect(mapSourceEvent({ id: 'x', subject: 'transfer.dispatched', payload: transfer() })).toEqual([]);
    expect(mapSourceEvent({ id: 'x', subject: 'collectkey.qr_issued', payload: {} })).toEqual([]);
    expect(mapSourceEvent({ id: 'x', subject: 'ledger.credited', payload: {} })).toEqual([]);
  });

  it('adds collect_key.payment_received to a Bre-B deposit to a key', () => {
    const payload = depositEventsV1.DepositEvent.toJSON(
      depositEventsV1.DepositEvent.fromPartial({
        eventId: 'd',
        companyId: 'c1',
        occurredAt: now,
        deposit: {
          id: 'dep_1',
          status: 'ASSIGNED',
          amountCents: 10n,
          source: 'BREB',
          brebKey: { id: 'bkey_1', externalId: 'x', name: 'n', value: '@v' },
          createdAt: now,
        },
      }),
    );
    const out = mapSourceEvent({ id: 'src-3', subject: 'deposit.paid', payload });
    expect(out.map((e) => e.type)).toEqual(['deposit.paid', 'collect_key.payment_received']);
    expect(new Set(out.map((e) => e.id)).size).toBe(2);
    expect(out[1]!.data).toEqual(out[0]!.data);
    expect(out[0]!.data).toMatchObject({ id: 'dep_1', amountCents: '10', brebKey: { id: 'bkey_1', externalId: 'x', name: 'n', value: '@v' } });
  });

  it('throws on a payload without its ids (the dispatcher logs and drops it)', () => {
    expect(() => mapSourceEvent({ id: 'x', subject: 'transfer.completed', payload: { nonsense: true } })).toThrow();
  });

  it("issue 36: company.security_changed (the gateway's event) is delivered to the company, ordered per company", () => {
    const payload = companyEventsV1.CompanySecurityChanged.toJSON(
      companyEventsV1.CompanySecurityChanged.fromPartial({
        eventId: 'g1',
        companyId: 'c1',
        change: 'API_KEY_REVOKED',
        summary: 'Se revocó la clave de API wk_test_ab12….',
        actorKind: 'operator',
        actorId: 'op1',
        detailsJson: '{"keyId":"k1","prefix":"wk_test_ab12"}',
        occurredAt: now,
      }),
    );
    const [e, ...rest] = mapSourceEvent({ id: 'src-g', subject: 'company.security_changed', payload });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      type: 'company.security_changed',
      companyId: 'c1',
      resourceKey: 'company:c1',
      id: webhookEventId('src-g', 'company.security_changed'),
      createdAt: now,
    });
    expect(e!.data).toEqual({
      companyId: 'c1',
      change: 'API_KEY_REVOKED',
      summary: 'Se revocó la clave de API wk_test_ab12….',
      actor: { kind: 'operator', id: 'op1' },
      approvalRequestId: null,
      effectiveAt: null,
      details: { keyId: 'k1', prefix: 'wk_test_ab12' },
      occurredAt: '2026-11-21T10:00:00.000000Z',
    });
    const requested = companyEventsV1.CompanySecurityChanged.toJSON(
      companyEventsV1.CompanySecurityChanged.fromPartial({
        eventId: 'g2',
        companyId: 'c1',
        change: 'MULTISIG_THRESHOLD_CHANGE_REQUESTED',
        summary: 's',
        actorKind: 'bootstrap-token',
        approvalRequestId: 'apr_1',
        effectiveAt: now,
        detailsJson: '',
        occurredAt: now,
      }),
    );
    expect(mapSourceEvent({ id: 'src-g2', subject: 'company.security_changed', payload: requested })[0]!.data).toMatchObject({
      actor: { kind: 'bootstrap-token', id: null },
      approvalRequestId: 'apr_1',
      effectiveAt: '2026-11-21T10:00:00.000000Z',
      details: {},
    });
    expect(() => mapSourceEvent({ id: 'x', subject: 'company.security_changed', payload: { summary: 'sin empresa' } })).toThrow();
    expect(mapSourceEvent({ id: 'x', subject: 'company.other', payload: {} })).toEqual([]);
  });

  it("company.policy_changed (the transfer service's) is delivered to the company with the policy as a JSON object, ordered per company", () => {
    const document = {
      rules: [{ id: 'grandes', when: { amountAtLeastCents: 5_000_000_000 }, then: { action: 'REQUIRE_APPROVALS', approvals: 2 } }],
      otherwise: { action: 'ALLOW' },
    };
    const payload = policyEventsV1.ApprovalPolicyChanged.toJSON(
      policyEventsV1.ApprovalPolicyChanged.fromPartial({
        eventId: 'p1',
        companyId: 'c1',
        policyId: 'apol_aaaaaaaaaaaaaaaaaaaaaaaa',
        version: 3,
        documentJson: JSON.stringify(document),
        effectiveAt: now,
        signedBy: ['ana@empresa.co', 'luis@empresa.co'],
        previousVersion: 2,
        occurredAt: now,
      }),
    );
    const [e, ...rest] = mapSourceEvent({ id: 'src-p', subject: 'company.policy_changed', payload });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      type: 'company.policy_changed',
      companyId: 'c1',
      resourceKey: 'company:c1',
      resourceId: 'apol_aaaaaaaaaaaaaaaaaaaaaaaa',
      id: webhookEventId('src-p', 'company.policy_changed'),
      createdAt: now,
    });
    expect(e!.data).toEqual({
      companyId: 'c1',
      policyId: 'apol_aaaaaaaaaaaaaaaaaaaaaaaa',
      version: 3,
      policy: document,
      effectiveAt: '2026-11-21T10:00:00.000000Z',
      signedBy: ['ana@empresa.co', 'luis@empresa.co'],
      previousVersion: 2,
      occurredAt: '2026-11-21T10:00:00.000000Z',
    });
    expect(isWebhookEventType('company.policy_changed')).toBe(true);
    expect(() => mapSourceEvent({ id: 'x', subject: 'company.policy_changed', payload: { version: 1 } })).toThrow();
  });

  it("maps a counterparty's verification to counterparty.verified / verification_failed with the API's counterparty (account masked)", () => {
    const counterparty = {
      id: 'cpty_aaaaaaaaaaaaaaaaaaaaaaaa',
      name: 'Nómina',
      rail: 'ACH',
      bankAccount: { bankId: 1, bankName: 'Bancolombia', accountTypeId: 20, accountNumberMasked: '****4517' },
      documentTypeId: 1,
      documentNumber: '1020304050',
      holderName: 'Ana Pérez',
      tags: [],
      verification: {
        status: 'FAILED',
        method: 'PRENOTE',
        reasonCode: 'R17',
        reason: 'La identificación del titular no corresponde a la cuenta',
        requestedAt: now,
        decidedAt: now,
      },
      createdAt: now,
      updatedAt: now,
      version: 3,
    };
    const payload = counterpartyEventsV1.CounterpartyEvent.toJSON(
      counterpartyEventsV1.CounterpartyEvent.fromPartial({ eventId: 'ce', companyId: 'c1', counterparty, occurredAt: now }),
    );
    const [e, ...rest] = mapSourceEvent({ id: 'src-c', subject: 'counterparty.verification_failed', payload });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      type: 'counterparty.verification_failed',
      companyId: 'c1',
      resourceKey: 'counterparty:cpty_aaaaaaaaaaaaaaaaaaaaaaaa',
      createdAt: now,
    });
    expect(e!.data).toEqual(counterpartyView(counterpartyEventsV1.CounterpartyEvent.fromJSON(payload).counterparty!));
    expect(e!.data).toMatchObject({ bankAccount: { accountNumberMasked: '****4517' }, verification: { status: 'FAILED', reasonCode: 'R17' } });
    const [v] = mapSourceEvent({ id: 'src-v', subject: 'counterparty.verified', payload });
    expect(v!.type).toBe('counterparty.verified');
    expect(v!.id).not.toBe(e!.id);
    expect(mapSourceEvent({ id: 'src-x', subject: 'counterparty.something_else', payload })).toEqual([]);
    expect(() => mapSourceEvent({ id: 'src-y', subject: 'counterparty.verified', payload: { companyId: 'c1' } })).toThrow(/counterparty/);
  });

  it('maps schedule.run_started / run_failed / run_skipped to their webhooks: the run as GET /schedules/{id}/runs shows it (without claimedAt), ordered per run', () => {
    const run = {
      scheduleId: '5c4e0000-0000-4000-8000-000000000001',
      companyId: 'c1',
      runId: '7a110000-0000-4000-8000-000000000002',
      seq: 3,
      nominalAt: '2026-12-15T13:00:00.000Z',
      dueAt: '2026-12-15T13:00:00.000Z',
      runKey: 'schedule:5c4e0000-0000-4000-8000-000000000001:2026-12-15T08:00',
      actionKind: 'SEND',
    };
    const started = scheduleEventsV1.ScheduleRunStarted.toJSON({
      eventId: 'e1',
      run,
      transferId: 'tr-1',
      amountCents: 250_000n,
      status: 'PENDING',
      occurredAt: '2026-12-15T13:00:01.250Z',
    });
    const [e, ...rest] = mapSourceEvent({ id: 'src-s', subject: 'schedule.run_started', payload: started });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({ type: 'schedule.run_started', companyId: 'c1', resourceKey: `schedule_run:${run.runId}`, resourceId: run.runId });
    expect(e!.data).toEqual({
      id: run.runId,
      scheduleId: run.scheduleId,
      seq: 3,
      nominalAt: '2026-12-15T13:00:00.000000Z',
      dueAt: '2026-12-15T13:00:00.000000Z',
      runKey: run.runKey,
      status: 'STARTED',
      amountCents: 250_000,
      transferId: 'tr-1',
      walletMoveId: null,
      batchId: null,
      transferStatus: 'PENDING',
      batchStatus: null,
      error: null,
      finishedAt: '2026-12-15T13:00:01.250000Z',
    });
    const failed = scheduleEventsV1.ScheduleRunFailed.toJSON({
      eventId: 'e2',
      run,
      errorCode: 'INSUFFICIENT_BALANCE',
      errorMessage: 'El saldo disponible no cubre el monto más la comisión y el IVA.',
      amountCents: 250_000n,
      occurredAt: '2026-12-15T13:00:01.250Z',
    });
    const [f] = mapSourceEvent({ id: 'src-f', subject: 'schedule.run_failed', payload: failed });
    expect(f!.data).toMatchObject({ status: 'FAILED', transferId: null, error: { code: 'INSUFFICIENT_BALANCE', message: expect.stringMatching(/saldo/) } });
    const skipped = scheduleEventsV1.ScheduleRunSkipped.toJSON({ eventId: 'e3', run, reason: 'nada', occurredAt: '2026-12-15T13:00:01.250Z' });
    const [k] = mapSourceEvent({ id: 'src-k', subject: 'schedule.run_skipped', payload: skipped });
    expect(k!.data).toMatchObject({ status: 'SKIPPED', amountCents: null, error: null });
    expect(() => mapSourceEvent({ id: 'src-x', subject: 'schedule.run_started', payload: { eventId: 'x' } })).toThrow(/without its run/);
  });

  it('maps wallet.moved to the wallet.moved webhook: the move as GET /wallets/moves/{id} shows it, ordered per move', () => {
    const moved = (extra: Partial<walletEventsV1.WalletMoved> = {}) =>
      walletEventsV1.WalletMoved.toJSON(
        walletEventsV1.WalletMoved.fromPartial({
          eventId: 'wm1',
          companyId: 'c1',
          moveId: 'c0ffee00-0000-4000-8000-000000000001',
          fromRail: ledgerV1.Rail.BREB,
          toRail: ledgerV1.Rail.ACH,
          amountCents: 150_000n,
          reference: 'cierre',
          debitMovementId: 'd0000000-0000-4000-8000-000000000002',
          creditMovementId: 'c0000000-0000-4000-8000-000000000003',
          occurredAt: now,
          ...extra,
        }),
      ) as Record<string, unknown>;
    // The ledger writes the posting's instant with its microseconds: the webhook keeps them, as the API answers them.
    const payload = { ...moved(), occurredAt: '2026-11-21T10:00:00.123456Z' };
    const [e, ...rest] = mapSourceEvent({ id: 'src-m', subject: 'wallet.moved', payload });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      id: webhookEventId('src-m', 'wallet.moved'),
      type: 'wallet.moved',
      companyId: 'c1',
      resourceKey: 'wallet_move:c0ffee00-0000-4000-8000-000000000001',
      resourceId: 'c0ffee00-0000-4000-8000-000000000001',
    });
    expect(e!.data).toEqual({
      id: 'c0ffee00-0000-4000-8000-000000000001',
      from: 'BREB',
      to: 'ACH',
      amountCents: 150_000,
      status: 'COMPLETED',
      reference: 'cierre',
      description: null,
      debitTransactionId: 'd0000000-0000-4000-8000-000000000002',
      creditTransactionId: 'c0000000-0000-4000-8000-000000000003',
      createdAt: '2026-11-21T10:00:00.123456Z',
    });
    expect(isWebhookEventType('wallet.moved')).toBe(true);
    expect(mapSourceEvent({ id: 'src-n', subject: 'wallet.moved', payload: moved() })[0]!.data.createdAt).toBe('2026-11-21T10:00:00.000000Z');
    expect(mapSourceEvent({ id: 'src-o', subject: 'wallet.something_else', payload })).toEqual([]);
    expect(() => mapSourceEvent({ id: 'src-p', subject: 'wallet.moved', payload: { companyId: 'c1' } })).toThrow(/wallet.moved/);
  });
  it('maps wallet.balance_* to the wallet.balance_* webhooks: the crossing as GET /wallets/alerts/history lists it, ordered per wallet', () => {
    const alert = (extra: Partial<walletEventsV1.WalletBalanceAlert> = {}) =>
      walletEventsV1.WalletBalanceAlert.toJSON(
        walletEventsV1.WalletBalanceAlert.fromPartial({
          eventId: 'ba1',
          companyId: 'c1',
          alertId: 'a1a1a1a1-0000-4000-8000-000000000001',
          rail: ledgerV1.Rail.BREB,
          kind: ledgerV1.BalanceAlertKind.LOW,
          state: ledgerV1.BalanceAlertState.LOW,
          availableCents: 450_000_000n,
          thresholdCents: 500_000_000n,
          lowThresholdCents: 500_000_000n,
          hysteresisCents: 10_000_000n,
          occurredAt: '2026-11-21T10:00:00.123000Z',
          ...extra,
        }),
      ) as Record<string, unknown>;
    const [e, ...rest] = mapSourceEvent({ id: 'src-ba', subject: 'wallet.balance_low', payload: alert() });
    expect(rest).toEqual([]);
    expect(e).toMatchObject({
      id: webhookEventId('src-ba', 'wallet.balance_low'),
      type: 'wallet.balance_low',
      companyId: 'c1',
      resourceKey: 'wallet_balance:c1:BREB',
      resourceId: 'a1a1a1a1-0000-4000-8000-000000000001',
    });
    expect(e!.createdAt.toISOString()).toBe('2026-11-21T10:00:00.123Z');
    expect(e!.data).toEqual({
      id: 'a1a1a1a1-0000-4000-8000-000000000001',
      type: 'wallet.balance_low',
      rail: 'BREB',
      kind: 'LOW',
      state: 'LOW',
      availableCents: '450000000',
      thresholdCents: 500_000_000,
      lowThresholdCents: 500_000_000,
      highThresholdCents: null,
      hysteresisCents: 10_000_000,
      occurredAt: '2026-11-21T10:00:00.123000Z',
    });
    // the three other crossings, each its own type; a negative balance (after a reversal) stays exact
    const pairs: Array<[string, ledgerV1.BalanceAlertKind, ledgerV1.BalanceAlertState]> = [
      ['wallet.balance_recovered', ledgerV1.BalanceAlertKind.RECOVERED, ledgerV1.BalanceAlertState.NORMAL],
      ['wallet.balance_high', ledgerV1.BalanceAlertKind.HIGH, ledgerV1.BalanceAlertState.HIGH],
      ['wallet.balance_normal', ledgerV1.BalanceAlertKind.NORMAL, ledgerV1.BalanceAlertState.NORMAL],
    ];
    for (const [subject, kind, state] of pairs) {
      const [x] = mapSourceEvent({ id: `src-${subject}`, subject, payload: alert({ kind, state, rail: ledgerV1.Rail.ACH, highThresholdCents: 900_000_000n }) });
      expect(x).toMatchObject({ type: subject, resourceKey: 'wallet_balance:c1:ACH', data: { type: subject, rail: 'ACH', highThresholdCents: 900_000_000 } });
      expect(isWebhookEventType(subject)).toBe(true);
    }
    expect(mapSourceEvent({ id: 'src-neg', subject: 'wallet.balance_low', payload: alert({ availableCents: -5n }) })[0]!.data.availableCents).toBe('-5');
    // a subject that is no crossing maps to nothing; a payload without its alert, or of another kind than its subject, is refused
    expect(mapSourceEvent({ id: 'src-bz', subject: 'wallet.balance_zero', payload: alert() })).toEqual([]);
    expect(() => mapSourceEvent({ id: 'src-bx', subject: 'wallet.balance_low', payload: { companyId: 'c1' } })).toThrow(/wallet.balance_low/);
    expect(() => mapSourceEvent({ id: 'src-by', subject: 'wallet.balance_high', payload: alert() })).toThrow(/LOW/);
  });
});
