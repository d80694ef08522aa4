import { randomUUID } from 'node:crypto';
import { signPayload } from '@wallet/platform';
import { eventually } from '@wallet/platform/testing';
import { MovementType, failure, startHarness, type Harness } from './harness.js';

/**
 * A key is stored (REGISTERING) before the directory registers its value and goes ACTIVE when the
 * directory confirms it, so an inbound payment always finds a row: while REGISTERING, or to a value
 * with no key here, it is refused as retryable (503) and the network retries; nothing is
 * acknowledged unbooked. A DirectoryGate between the service and the sandbox's directory holds or
 * loses the directory's answers.
 */
describe('collect keys registered before they go live; payments in the window are retried, never dropped', () => {
  let h: Harness;
  const SECRET = 'dev-rail-callback-secret';
  // A longer grace than the other file: the gate decides when the sweeper's attempts are answered.
  beforeAll(async () => {
    h = await startHarness({ gate: true, env: { SWEEPER_GRACE_SECONDS: '2', PROVIDER_HTTP_TIMEOUT_MS: '8000' } });
  });
  afterAll(async () => {
    await h?.stop();
  });
  afterEach(async () => {
    h.gate!.release();
    await h.expectInvariants();
  });

  const suffix = () => randomUUID().replace(/-/g, '').slice(0, 10);
  const row = async (value: string) =>
    await h.service.db.query<{ id: string; state: string; company_id: string }>(
      `select id, state, company_id from collect_key.keys where key_value = ? order by created_at desc`,
      [value],
    );
  const outbox = async (subjectLike: string, jsonPath: string, value: string) =>
    await h.service.db.query<{ subject: string }>(`select subject from collect_key.outbox where subject like ? and payload #>> ? = ? order by seq`, [
      subjectLike,
      `{${jsonPath}}`,
      value,
    ]);
  const paymentRows = async (providerTransferId: string) =>
    h.service.db.query(`select 1 from collect_key.payments where provider_transfer_id = ?`, [providerTransferId]);
  const pay = async (keyValue: string, amountCents: number) => {
    const r = await h.sandboxPost('/sandbox/breb/incoming', {
      keyValue,
      amountCents,
      payerName: 'Luz Díaz',
      payerDocument: 'CC 52111222',
      payerBank: 'Davivienda',
    });
    expect(r.status).toBe(202);
    return String(r.body.providerTransferId);
  };
  const answers = (transfer: string) => h.receiver.forTransfer(transfer).map((r) => r.status);
  const retried503 = (transfer: string, n: number) => eventually(async () => answers(transfer).filter((s) => s === 503).length >= n || undefined, 15_000);
  const creditedOnce = async (transfer: string) => {
    await eventually(async () => answers(transfer).includes(200) || undefined, 15_000);
    const ok = h.receiver.forTransfer(transfer).filter((r) => r.status === 200);
    expect(ok.map((r) => r.reply.duplicate)).toEqual([false]);
    // Every refusal before it was the retryable error in the API error shape.
    for (const r of h.receiver.forTransfer(transfer).filter((x) => x.status !== 200))
      expect(r).toMatchObject({ status: 503, reply: { error: 'SERVICE_UNAVAILABLE' } });
    expect(await outbox('deposit.%', 'deposit,providerTransferId', transfer)).toEqual([{ subject: 'deposit.paid' }]);
  };
  /** The network's redelivery of a notification already credited: acknowledged as a duplicate. */
  const duplicateAfter = async (transfer: string) => {
    const n = h.receiver.forTransfer(transfer).length;
    expect((await h.sandboxPost(`/sandbox/callbacks/${transfer}/redeliver`)).status).toBeLessThan(300);
    await eventually(async () => h.receiver.forTransfer(transfer).length > n || undefined, 10_000);
    expect(h.receiver.forTransfer(transfer).slice(n)).toMatchObject([{ status: 200, reply: { accepted: true, duplicate: true } }]);
  };
  const transfersIn = async (co: string) =>
    (await h.ledgerClient.listMovements({ page: 0, limit: 50 }, h.ctx(co))).items.filter((m) => m.type === MovementType.TRANSFER_IN);
  const signed = (keyValue: string, providerTransferId: string) => {
    const now = new Date().toISOString();
    const raw = Buffer.from(
      JSON.stringify({
        eventId: `evt-${providerTransferId}`,
        providerTransferId,
        keyValue,
        amountCents: 7_700,
        payerName: 'Pedro',
        payerDocument: 'CC 80',
        payerBank: 'Nequi',
        receivedAt: now,
        occurredAt: now,
      }),
    );
    return { rawBody: raw, signature: signPayload(SECRET, raw, Math.floor(Date.now() / 1000)) };
  };
  /** The row a CreateKey leaves when it dies right after storing it (before or after the directory call). */
  const crashedRow = async (co: string, externalId: string, value: string) => {
    const id = `bkey_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    await h.service.db.query(
      `insert into collect_key.keys (id, company_id, external_id, name, key_type, key_value, state, created_at, updated_at)
      values (?, ?, ?, 'Caida', 'ALPHANUM', ?, 'REGISTERING', now() - interval '1 minute', now() - interval '1 minute')`,
      [id, co, externalId, value],
    );
    return id;
  };

  it('the window: a payment while the key is REGISTERING is answered 503, retried by the network, and credited once when the registration completes', async () => {
    const [co, other] = [await h.newCompany(), await h.newCompany()];
    const value = `@win${suffix()}`;
    h.gate!.set('hold');
    const creating = h.client.createKey({ externalId: 'win-1', name: 'Ventana', keyValue: value }, h.ctx(co));
    creating.catch(() => undefined);
    await eventually(async () => h.gate!.forwarded.includes(value) || undefined, 10_000);
    const [stored] = await row(value);
    expect(stored).toMatchObject({ state: 'REGISTERING', company_id: co });
    const id = stored!.id;

    // Not a key to clients yet, and it holds its value and externalId.
    expect((await h.client.listKeys({ limit: 0 }, h.ctx(co))).items).toEqual([]);
    expect((await h.client.listKeys({ limit: 0, externalId: 'win-1' }, h.ctx(co))).items).toEqual([]);
    for (const call of [
      h.client.getKey({ id }, h.ctx(co)),
      h.client.getKey({ id: 'ext:win-1' }, h.ctx(co)),
      h.client.issueQr({ keyId: id }, h.ctx(co)),
      h.client.issueQr({ keyId: 'ext:win-1' }, h.ctx(co)),
      h.client.deleteKey({ id }, h.ctx(co)),
      h.client.setKeyState({ id, state: 'SUSPENDED' }, h.ctx()),
    ])
      expect((await failure(call)).code).toBe('KEY_NOT_FOUND');
    expect((await failure(h.client.deleteKey({ id: 'ext:win-1' }, h.ctx(co)))).code).toBe('BREB_DIRECTORY_LOOKUP_FAILED'); // retry later
    expect((await failure(h.client.createKey({ externalId: 'win-x', name: 'Otra', keyValue: value }, h.ctx(other)))).code).toBe('KEY_ALREADY_REGISTERED');
    expect((await failure(h.client.createKey({ externalId: 'win-2', name: 'Otra', keyValue: value }, h.ctx(co)))).code).toBe('KEY_ALREADY_REGISTERED');
    // A retry for the same customer joins the registration in flight.
    const retry = h.client.createKey({ externalId: 'win-1', name: 'Ventana', keyValue: value }, h.ctx(co));
    retry.catch(() => undefined);

    const before = await h.brebAvailable(co);
    const transfer = await pay(value, 123_400);
    await retried503(transfer, 2);
    expect(await paymentRows(transfer)).toHaveLength(0);
    expect(await h.brebAvailable(co)).toBe(before);

    h.gate!.release();
    const [created, retried] = [await creating, await retry];
    expect(created).toMatchObject({ key: { id, state: 'ACTIVE', keyValue: value, externalId: 'win-1' } });
    expect(retried).toMatchObject({ key: { id, state: 'ACTIVE' } });
    // One compare-and-set made it ACTIVE: at most one of the two calls says created (none if the sweeper won).
    const winners = [created.created, retried.created].filter(Boolean).length;
    expect(winners).toBeLessThanOrEqual(1);
    if (winners === 0) expect(h.gate!.forwarded.filter((v) => v === value).length).toBeGreaterThanOrEqual(3);
    expect(await outbox('collectkey.created', 'key,id', id)).toHaveLength(1);

    await creditedOnce(transfer);
    expect((await h.brebAvailable(co)) - before).toBe(123_400n);
    await duplicateAfter(transfer);
    expect((await h.brebAvailable(co)) - before).toBe(123_400n);
    expect((await transfersIn(co)).map((m) => m.netAmount)).toEqual([123_400n]);
    expect((await h.client.listKeys({ limit: 0 }, h.ctx(co))).items.map((k) => k.id)).toEqual([id]);
  });

  it('the crash between registration and row update: the directory registered it, the answer was lost; the sweeper finishes it and the retried payment is credited once', async () => {
    const co = await h.newCompany();
    const value = `@lost${suffix()}`;
    h.gate!.set('drop');
    expect((await failure(h.client.createKey({ externalId: 'lost-1', name: 'Perdida', keyValue: value }, h.ctx(co)))).code).toBe(
      'BREB_DIRECTORY_LOOKUP_FAILED',
    );
    // The sweeper's attempts are held until the payment has been refused at least once.
    h.gate!.set('hold');
    expect(await row(value)).toMatchObject([{ state: 'REGISTERING' }]);
    expect(
      await h.service.db.query(`select 1 from sandbox.breb_registrations where key_value = ? and deleted_at is null and participant_callback_url = ?`, [
        value,
        h.receiver.url,
      ]),
    ).toHaveLength(1);

    const before = await h.brebAvailable(co);
    const transfer = await pay(value, 48_000);
    await retried503(transfer, 1);
    expect(await paymentRows(transfer)).toHaveLength(0);
    const id = (await row(value))[0]!.id;
    await eventually(async () => h.gate!.forwarded.filter((v) => v === value).length >= 2 || undefined, 15_000); // the sweeper asked again

    h.gate!.release();
    await eventually(async () => (await row(value))[0]!.state === 'ACTIVE' || undefined, 15_000);
    expect(await outbox('collectkey.created', 'key,id', id)).toHaveLength(1);
    await creditedOnce(transfer);
    expect((await h.brebAvailable(co)) - before).toBe(48_000n);
    // The client's retry returns the key the sweeper finished.
    expect(await h.client.createKey({ externalId: 'lost-1', name: 'Perdida', keyValue: value }, h.ctx(co))).toMatchObject({
      created: false,
      key: { id, state: 'ACTIVE' },
    });
    await duplicateAfter(transfer);
    expect((await h.brebAvailable(co)) - before).toBe(48_000n);
    expect((await transfersIn(co)).map((m) => m.netAmount)).toEqual([48_000n]);
  });

  it('a crash before the directory answered: the sweeper keeps asking while the directory is down, finishes the key when it is back, and rolls back (FAILED) a value another participant holds', async () => {
    const co = await h.newCompany();
    const free = `@crash${suffix()}`;
    const taken = `@taken${suffix()}`;
    const reg = await h.sandboxPost('/breb/directory/registrations', {
      keyValue: taken,
      keyType: 'ALPHANUM',
      holderName: 'Otro Participante',
      participantCallbackUrl: 'http://127.0.0.1:9/another-participant',
    });
    expect(reg.status).toBe(201);
    await h.sandboxPost('/sandbox/faults', { directory: 'down' });
    let freeId: string;
    let takenId: string;
    try {
      freeId = await crashedRow(co, 'crash-1', free);
      takenId = await crashedRow(co, 'crash-2', taken);
      // Leased and asked (its updated_at moves ahead), and still REGISTERING while the directory cannot answer.
      await eventually(
        async () =>
          (
            await h.service.db.query<{ n: number }>(
              `select count(*)::int as n from collect_key.keys
        where id = ? and state = 'REGISTERING' and updated_at > now() - interval '30 seconds'`,
              [freeId],
            )
          )[0]!.n === 1 || undefined,
        15_000,
      );
      const transfer = `tr-${randomUUID()}`;
      expect((await failure(h.client.handleIncomingPayment(signed(free, transfer), h.ctx()))).code).toBe('SERVICE_UNAVAILABLE');
      expect(await paymentRows(transfer)).toHaveLength(0);
    } finally {
      await h.sandboxPost('/sandbox/faults', { directory: 'up' });
    }
    await eventually(async () => (await row(free))[0]!.state === 'ACTIVE' || undefined, 15_000);
    await eventually(async () => (await row(taken))[0]!.state === 'FAILED' || undefined, 15_000);
    expect(
      await h.service.db.query(`select participant_callback_url as url from sandbox.breb_registrations where key_value = ? and deleted_at is null`, [free]),
    ).toEqual([{ url: h.receiver.url }]);
    expect(
      await h.service.db.query(`select participant_callback_url as url from sandbox.breb_registrations where key_value = ? and deleted_at is null`, [taken]),
    ).toEqual([{ url: 'http://127.0.0.1:9/another-participant' }]); // not ours: nothing to withdraw, and not withdrawn
    expect(await outbox('collectkey.created', 'key,id', freeId)).toHaveLength(1);
    expect(await outbox('collectkey.%', 'key,id', takenId)).toHaveLength(0);

    // The finished key is a key like any other; the FAILED one is nowhere, and its externalId is free again.
    expect(await h.client.getKey({ id: 'ext:crash-1' }, h.ctx(co))).toMatchObject({ id: freeId, state: 'ACTIVE' });
    expect((await failure(h.client.getKey({ id: takenId }, h.ctx(co)))).code).toBe('KEY_NOT_FOUND');
    expect((await h.client.listKeys({ limit: 0 }, h.ctx(co))).items.map((k) => k.id)).toEqual([freeId]);
    const again = await h.client.createKey({ externalId: 'crash-2', name: 'De nuevo' }, h.ctx(co));
    expect(again).toMatchObject({ created: true, key: { externalId: 'crash-2', state: 'ACTIVE' } });
    expect(again.key!.id).not.toBe(takenId);

    // A notification for the FAILED value (another participant's) books nothing here and is retryable.
    const misrouted = `tr-${randomUUID()}`;
    expect((await failure(h.client.handleIncomingPayment(signed(taken, misrouted), h.ctx()))).code).toBe('SERVICE_UNAVAILABLE');
    // Payments to the finished key are credited, and a duplicate after that is a duplicate.
    const before = await h.brebAvailable(co);
    const transfer = await pay(free, 31_000);
    await creditedOnce(transfer);
    await duplicateAfter(transfer);
    expect((await h.brebAvailable(co)) - before).toBe(31_000n);
  });

  it('a value with no key here: 503 and nothing booked, again on every retry; credited once when a key for it exists', async () => {
    // Straight to the service: refused as retryable, the duplicate too; no payment row, no provider event.
    const direct = `tr-${randomUUID()}`;
    const body = signed(`@nobody${suffix()}`, direct);
    for (let i = 0; i < 2; i++) expect((await failure(h.client.handleIncomingPayment(body, h.ctx()))).code).toBe('SERVICE_UNAVAILABLE');
    expect(await paymentRows(direct)).toHaveLength(0);
    expect(await h.service.db.query(`select 1 from collect_key.provider_events where provider_transfer_id = ?`, [direct])).toHaveLength(0);

    // Through the network: a registration of ours with no row (left by an older release, say).
    const value = `@orphan${suffix()}`;
    const reg = await h.sandboxPost('/breb/directory/registrations', {
      keyValue: value,
      keyType: 'ALPHANUM',
      holderName: 'Huerfana',
      participantCallbackUrl: h.receiver.url,
    });
    expect(reg.status).toBe(201);
    const transfer = await pay(value, 55_000);
    await retried503(transfer, 3); // the network keeps it and keeps asking
    expect(await paymentRows(transfer)).toHaveLength(0);

    const co = await h.newCompany();
    const before = await h.brebAvailable(co);
    const k = await h.client.createKey({ externalId: 'orphan-1', name: 'Huerfana', keyValue: value }, h.ctx(co));
    expect(k).toMatchObject({ created: true, key: { state: 'ACTIVE', keyValue: value } });
    await creditedOnce(transfer);
    expect((await h.brebAvailable(co)) - before).toBe(55_000n);
    await duplicateAfter(transfer);
    expect((await h.brebAvailable(co)) - before).toBe(55_000n);
    expect((await transfersIn(co)).map((m) => m.netAmount)).toEqual([55_000n]);
  });
});
