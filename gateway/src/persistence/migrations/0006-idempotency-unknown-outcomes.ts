import { Migration } from '@mikro-orm/migrations';

/**
 * `Idempotency-Key` claims of routes whose downstream is idempotent by the key (RouteDef
 * `idempotent: 'bound'`, POST /transfers/send) get a third state: UNKNOWN, the outcome of
 * the request is not known (a 5xx or a transport error after the call may have taken effect). The
 * row keeps the key bound to its request (another body → IDEMPOTENCY_KEY_REUSED) until `expires_at`,
 * and the same request may run again at once: the downstream answers what the key already made.
 */
export class Migration0006IdempotencyUnknownOutcomes extends Migration {
  override name = '0006-idempotency-unknown-outcomes';

  override up(): void {
    this.addSql(`alter table gateway.idempotency_keys
      drop constraint if exists idempotency_keys_state_check,
      drop constraint if exists idempotency_keys_check,
      add constraint idempotency_keys_state_check check (state in ('IN_FLIGHT', 'DONE', 'UNKNOWN')),
      add constraint idempotency_keys_answer_check check (state <> 'DONE' or status_code is not null)`);
  }

  override down(): void {
    this.addSql(`delete from gateway.idempotency_keys where state = 'UNKNOWN'`);
    this.addSql(`alter table gateway.idempotency_keys
      drop constraint if exists idempotency_keys_state_check,
      drop constraint if exists idempotency_keys_answer_check,
      add constraint idempotency_keys_state_check check (state in ('IN_FLIGHT', 'DONE')),
      add constraint idempotency_keys_check check (state = 'IN_FLIGHT' or status_code is not null)`);
  }
}
