import { AppError, signPayload, type Logger, type ReturnStore } from '@wallet/platform';
import type { CollectKeyRecord, KeyState } from '../domain/collect-key.js';
import { collectKeyDeps, type CollectKeyDeps } from './deps.js';
import { HandleIncomingPayment } from './incoming-payment.js';
import { PaymentSaga } from './payment-saga.js';
import { CreateKey } from './keys.js';
import type { BrebDirectory, CollectKeyStore, RegistrationOutcome } from './ports.js';
import { SettleRegistration } from './settle-registration.js';

const SECRET = 'unit-test-secret-0123456789';

/** Log lines as written (fields + message), to check what reaches the logs. */
function fakeLog() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    lines.push({ level, fields, msg });
  };
  const log = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') } as unknown as Logger;
  return { log, lines };
}

/** Just the key rows, in memory, with the compare-and-set the SQL store has. */
function fakeStore(keys: CollectKeyRecord[] = []) {
  const claiming = (s: KeyState) => s === 'REGISTERING' || s === 'ACTIVE' || s === 'SUSPENDED';
  const calls = { recordIntent: 0 };
  const store = {
    keys,
    async insertKey(k: CollectKeyRecord) {
      if (keys.some((x) => claiming(x.state) && x.companyId === k.companyId && x.externalId === k.externalId)) return 'EXTERNAL_TAKEN';
      if (keys.some((x) => claiming(x.state) && x.keyValue === k.keyValue)) return 'VALUE_TAKEN';
      const rec = { ...k, state: 'REGISTERING' as const };
      keys.push(rec);
      return { ...rec };
    },
    async liveByExternalId(companyId: string, externalId: string) {
      const k = keys.find((x) => claiming(x.state) && x.companyId === companyId && x.externalId === externalId);
      return k && { ...k };
    },
    async byId(id: string) {
      const k = keys.find((x) => x.id === id);
      return k && { ...k };
    },
    async byValue(value: string) {
      const k = keys.find((x) => claiming(x.state) && x.keyValue === value) ?? keys.filter((x) => x.keyValue === value && x.state === 'DELETED').pop();
      return k && { ...k };
    },
    async setState(id: string, from: KeyState[], to: KeyState) {
      const k = keys.find((x) => x.id === id && from.includes(x.state));
      if (!k) return undefined;
      k.state = to;
      return { ...k };
    },
    async byAnchorHandle(a: string) {
      const k = keys.find((x) => x.anchorHandle === a);
      return k && { ...k };
    },
    async byValueAt(value: string) {
      const k = keys.find((x) => x.keyValue === value && x.state === 'REGISTERING') ?? keys.filter((x) => x.keyValue === value && x.state !== 'FAILED').pop();
      return k && { ...k };
    },
    async paymentByTransfer() {
      return undefined;
    },
    async recordIntent() {
      calls.recordIntent++;
      throw new Error('not expected');
    },
  };
  return { store: store as unknown as CollectKeyStore, keys, calls };
}

function fakeDirectory(outcomes: RegistrationOutcome[]) {
  const calls = { register: [] as string[], unregister: [] as string[] };
  const directory: BrebDirectory = {
    async register(r) {
      calls.register.push(r.keyValue);
      return { outcome: outcomes.shift() ?? 'UNAVAILABLE', anchorHandle: null };
    },
    async unregister(v) {
      calls.unregister.push(v);
    },
    async returnPayment() {
      throw new Error('not expected');
    },
  };
  return { directory, calls };
}

const key = (over: Partial<CollectKeyRecord> = {}): CollectKeyRecord => ({
  id: `bkey_${'a'.repeat(24)}`,
  companyId: 'co-1',
  externalId: 'cust-1',
  name: 'Tienda',
  keyType: 'ALPHANUM',
  keyValue: '@tienda12345',
  state: 'REGISTERING',
  ivaApplicable: false,
  createdAt: new Date(),
  deletedAt: null,
  ...over,
});

function deps(store: CollectKeyStore, directory: BrebDirectory, log: Logger): CollectKeyDeps {
  return collectKeyDeps({
    store,
    directory,
    log,
    ledger: {
      computeBrebInflowFees: async () => {
        throw new Error('not expected');
      },
      recordInflow: async () => {
        throw new Error('not expected');
      },
      hasBrebWallet: async () => true,
      returnHeld: async () => {
        throw new Error('not expected');
      },
      reserveReturn: async () => {
        throw new Error('not expected');
      },
      commitReturn: async () => {
        throw new Error('not expected');
      },
      releaseReturn: async () => {
        throw new Error('not expected');
      },
    },
    returns: new Proxy({} as ReturnStore, {
      get: () => () => {
        throw new Error('not expected');
      },
    }),
    settings: { incomingCallbackUrl: 'http://127.0.0.1/cb', callbackSecret: SECRET, merchantName: 'M', merchantCity: 'BOGOTA', sweeperGraceSeconds: 15 },
  });
}

const code = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as AppError).code;
  }
  throw new Error('expected a failure');
};

describe('inbound payments that cannot be booked are refused as retryable', () => {
  const notification = (keyValue: string) => {
    const raw = Buffer.from(JSON.stringify({ eventId: 'evt-1', providerTransferId: 'brb_in_0001', keyValue, amountCents: 10_000 }));
    return { rawBody: raw, signature: signPayload(SECRET, raw, Math.floor(Date.now() / 1000)) };
  };

  it('no key for the value: SERVICE_UNAVAILABLE, an error log naming the transfer, the value masked', async () => {
    const { store, calls } = fakeStore();
    const { log, lines } = fakeLog();
    const d = deps(store, fakeDirectory([]).directory, log);
    const phone = '3001234567';
    expect(await code(new HandleIncomingPayment(d, new PaymentSaga(d)).execute(notification(phone)))).toBe('SERVICE_UNAVAILABLE');
    expect(calls.recordIntent).toBe(0);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'error', fields: expect.objectContaining({ providerTransferId: 'brb_in_0001', keyValue: '30***67' }) }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(phone);
  });

  it('a key still REGISTERING: SERVICE_UNAVAILABLE, nothing recorded', async () => {
    const { store, calls } = fakeStore([key()]);
    const { log, lines } = fakeLog();
    const d = deps(store, fakeDirectory([]).directory, log);
    expect(await code(new HandleIncomingPayment(d, new PaymentSaga(d)).execute(notification('@tienda12345')))).toBe('SERVICE_UNAVAILABLE');
    expect(calls.recordIntent).toBe(0);
    expect(JSON.stringify(lines)).not.toContain('@tienda12345');
  });
});

describe('SettleRegistration: the directory answer decides, by compare-and-set from REGISTERING', () => {
  it('REGISTERED → ACTIVE; TAKEN and REFUSED → FAILED with nothing to withdraw; UNAVAILABLE → unchanged', async () => {
    for (const [outcome, state] of [
      ['REGISTERED', 'ACTIVE'],
      ['TAKEN', 'FAILED'],
      ['REFUSED', 'FAILED'],
      ['UNAVAILABLE', 'REGISTERING'],
    ] as const) {
      const { store } = fakeStore([key()]);
      const dir = fakeDirectory([outcome]);
      const s = await new SettleRegistration(deps(store, dir.directory, fakeLog().log)).execute(key());
      expect([s.outcome, s.key.state]).toEqual([outcome, state]);
      expect(dir.calls.unregister).toEqual([]);
    }
  });

  it('a registration that lands after another asker moved the row to FAILED is withdrawn, unless the value is held here again', async () => {
    const { store, keys } = fakeStore([key({ state: 'FAILED' })]);
    const dir = fakeDirectory(['REGISTERED', 'REGISTERED']);
    const settle = new SettleRegistration(deps(store, dir.directory, fakeLog().log));
    expect((await settle.execute(key())).key.state).toBe('FAILED');
    expect(dir.calls.unregister).toEqual(['@tienda12345']);
    keys.push(key({ id: `bkey_${'b'.repeat(24)}`, externalId: 'cust-2', state: 'REGISTERING' }));
    await settle.execute(key());
    expect(dir.calls.unregister).toEqual(['@tienda12345']); // not again: the new row's registration
  });

  it('the row another asker already made ACTIVE is left as it is', async () => {
    const { store } = fakeStore([key({ state: 'ACTIVE' })]);
    const dir = fakeDirectory(['REGISTERED']);
    expect((await new SettleRegistration(deps(store, dir.directory, fakeLog().log)).execute(key())).key.state).toBe('ACTIVE');
    expect(dir.calls.unregister).toEqual([]);
  });
});

describe('CreateKey stores the row before the directory call', () => {
  it('the directory answers nothing: BREB_DIRECTORY_LOOKUP_FAILED, the row waits as REGISTERING; a retry finishes it (created: its CAS made it ACTIVE)', async () => {
    const { store, keys } = fakeStore();
    const dir = fakeDirectory(['UNAVAILABLE', 'REGISTERED']);
    const create = new CreateKey(deps(store, dir.directory, fakeLog().log));
    expect(await code(create.execute('co-1', { externalId: 'c1', name: 'Ana', keyValue: '@ana123' }))).toBe('BREB_DIRECTORY_LOOKUP_FAILED');
    expect(keys.map((k) => k.state)).toEqual(['REGISTERING']);
    const again = await create.execute('co-1', { externalId: 'c1', name: 'Ana', keyValue: '@ana123' });
    expect(again).toMatchObject({ created: true, key: { id: keys[0]!.id, state: 'ACTIVE' } });
    expect(await create.execute('co-1', { externalId: 'c1', name: 'Ana' })).toMatchObject({ created: false, key: { id: keys[0]!.id } });
    expect(dir.calls.register).toEqual(['@ana123', '@ana123']);
  });

  it('TAKEN: a given value → KEY_ALREADY_REGISTERED (row FAILED); a generated alias is redrawn', async () => {
    const { store, keys } = fakeStore();
    const create = new CreateKey(deps(store, fakeDirectory(['TAKEN', 'TAKEN', 'REGISTERED']).directory, fakeLog().log));
    expect(await code(create.execute('co-1', { externalId: 'c1', name: 'Ana', keyValue: '@ana123' }))).toBe('KEY_ALREADY_REGISTERED');
    expect(keys.map((k) => k.state)).toEqual(['FAILED']);
    const r = await create.execute('co-1', { externalId: 'c2', name: 'Bea' });
    expect(r).toMatchObject({ created: true, key: { state: 'ACTIVE', externalId: 'c2' } });
    expect(keys.map((k) => k.state)).toEqual(['FAILED', 'FAILED', 'ACTIVE']);
  });

  it('REFUSED → FAILED and BREB_DIRECTORY_LOOKUP_FAILED; the externalId is free again', async () => {
    const { store, keys } = fakeStore();
    const create = new CreateKey(deps(store, fakeDirectory(['REFUSED', 'REGISTERED']).directory, fakeLog().log));
    expect(await code(create.execute('co-1', { externalId: 'c1', name: 'Ana' }))).toBe('BREB_DIRECTORY_LOOKUP_FAILED');
    expect(await create.execute('co-1', { externalId: 'c1', name: 'Ana' })).toMatchObject({ created: true, key: { state: 'ACTIVE' } });
    expect(keys.map((k) => k.state)).toEqual(['FAILED', 'ACTIVE']);
  });
});
