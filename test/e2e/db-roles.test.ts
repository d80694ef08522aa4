import pg from 'pg';
import { runtimeRole } from '@wallet/platform';
import { startGateway } from '@wallet/gateway/testing';
import { startStack } from '../support/stack.js';

type Stack = Awaited<ReturnType<typeof startStack>>;

/**
 * Least privilege in the database (docs/security.md "Database roles"), tried as an insider would, with the
 * process's own credentials: each service connects as a login role that is only a member of its
 * schema's runtime role (`wallet_<schema>_app`), which the migrations grant DML on that schema and
 * nothing else. A gateway runs its real work under that role; a production process refuses a
 * superuser.
 */
describe('database roles', () => {
  let stack: Stack;
  const clients: pg.Client[] = [];

  /** A login role of this run that is a member of the schema's runtime role (what an SRE creates per service), and its URL. */
  async function loginAs(schema: string): Promise<string> {
    const login = `wallet_${schema}_login_e2e`;
    const admin = new pg.Client({ connectionString: stack.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`do $$ begin
          perform pg_advisory_xact_lock(hashtext('wallet reader roles'));
          if not exists (select 1 from pg_roles where rolname = '${login}') then create role ${login} login; end if;
          grant ${runtimeRole(schema)} to ${login};
        end $$`);
    } finally {
      await admin.end();
    }
    const url = new URL(stack.databaseUrl);
    url.username = login;
    url.password = '';
    return url.toString();
  }
  async function as(schema: string): Promise<pg.Client> {
    const c = new pg.Client({ connectionString: await loginAs(schema) });
    await c.connect();
    clients.push(c);
    return c;
  }

  beforeAll(async () => {
    stack = await startStack({ transfers: true });
  }, 120_000);
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await stack?.stop();
  });

  it("the gateway's role cannot touch money, other schemas, its audit log's history or the roles", async () => {
    const gw = await as('gateway');
    const refused: Array<[string, RegExp]> = [
      [`update ledger.wallets set available_cents = available_cents + 40000000`, /permission denied/],
      [`insert into transfer.aml_entries (id) values (gen_random_uuid())`, /permission denied/],
      [`update gateway.admin_audit set outcome = 'FAILED'`, /permission denied/],
      [`delete from gateway.admin_audit`, /permission denied/],
      [`truncate gateway.admin_audit`, /permission denied/],
      [`alter table gateway.admin_audit disable trigger admin_audit_no_update_delete`, /must be owner/],
      [`drop trigger admin_audit_no_update_delete on gateway.admin_audit`, /must be owner/],
      [`delete from gateway.bootstrap_state`, /permission denied/],
      [`delete from gateway.mikro_orm_migrations`, /permission denied/],
      [`create table gateway.puerta_trasera (id int)`, /permission denied/],
      [`create role puerta_trasera login`, /permission denied/],
      [`create role puerta_trasera_su login superuser`, /must be superuser|permission denied/],
      [`set role postgres`, /permission denied/],
    ];
    for (const [sql, error] of refused) {
      await expect(gw.query(sql)).rejects.toThrow(error);
    }
    // What it needs, it has: its own tables, and appending to the audit log.
    expect((await gw.query('select count(*)::int as n from gateway.companies')).rows[0].n).toBeGreaterThanOrEqual(0);
    await gw.query(
      `insert into gateway.admin_audit (id, principal_kind, action, method, route, request_id, outcome) values (gen_random_uuid(), 'anonymous', 'prueba', 'GET', '/x', 'r', 'SUCCEEDED')`,
    );
  });

  it("the transfer service's role cannot credit a wallet nor issue an API key", async () => {
    const tr = await as('transfer');
    await expect(tr.query(`update ledger.wallets set available_cents = available_cents + 40000000`)).rejects.toThrow(/permission denied/);
    await expect(tr.query(`insert into gateway.api_keys (id) values (gen_random_uuid())`)).rejects.toThrow(/permission denied/);
    await expect(tr.query(`select * from gateway.dashboard_users`)).rejects.toThrow(/permission denied/);
    expect((await tr.query('select count(*)::int as n from transfer.transfers')).rows[0].n).toBeGreaterThanOrEqual(0);
  });

  it('a gateway runs its real work as its own role; in production a superuser is refused at start', async () => {
    const url = await loginAs('gateway');
    const gw = await startGateway({
      databaseUrl: url,
      ledgerAddress: stack.ledger.address,
      namespace: `${stack.namespace}-role`,
      busNamespace: stack.namespace,
      env: { LOG_LEVEL: 'silent', GATEWAY_MIGRATE_ON_START: 'false' },
    });
    try {
      const call = async (method: string, path: string, body?: unknown, token = gw.adminToken) => {
        const r = await fetch(`${gw.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return { status: r.status, body: (await r.json()) as any };
      };
      const co = await call('POST', '/admin/companies', { name: 'Con Su Rol S.A.S.', nit: '900444555-6', taxRegime: 'COMMON' });
      expect(co.status).toBe(201);
      expect((await call('POST', `/admin/companies/${co.body.id}/wallets/BREB/credit`, { amountCents: 5_000, reference: 'rol' })).status).toBe(201);
      const key = await call('POST', `/admin/companies/${co.body.id}/api-keys`, { scope: 'READ', label: 'rol' });
      expect(key.status).toBe(201);
      const balance = await call('GET', '/wallets/balance', undefined, key.body.key);
      expect(balance.body.wallets.find((w: any) => w.rail === 'BREB').availableCents).toBe('5000');
      expect((await call('GET', '/admin/audit?limit=5')).status).toBe(200);
    } finally {
      await gw.stop();
    }

    await expect(
      startGateway({
        databaseUrl: stack.databaseUrl,
        ledgerAddress: stack.ledger.address,
        namespace: `${stack.namespace}-su`,
        busNamespace: stack.namespace,
        keepDatabaseRole: true,
        env: {
          NODE_ENV: 'production',
          LOG_LEVEL: 'silent',
          GATEWAY_MIGRATE_ON_START: 'false',
          API_KEY_PEPPER: 'e2e-roles-pepper-0123456789',
          GATEWAY_ENCRYPTION_KEY: 'e2e-roles-encryption-key-0123456789',
        },
      }),
    ).rejects.toThrow(/database role "postgres" is a superuser/);
  });
});
