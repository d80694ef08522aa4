import { Migration } from '@mikro-orm/migrations';

/**
 * One correction per external movement (docs/reconciliation.md "One case per external movement").
 * - runs.covers_until: the instant the run's report covers up to (its start, or the end of its
 *   Bogotá day when it ran later): ledger:check counts a day's postings after it as unreconciled, so a
 *   same-day run does not freeze the rest of the day.
 * - breaks.movement: the external movement the break is about ("<rail>:<provider id>", the ledger's
 *   corrections register name), to link it with its owner's money exception.
 * - breaks.adjustment_key / adjustment_state / adjustments / adjusted_cents: the ledger key and the
 *   amount of the accept_provider adjustment in force (POSTED), being undone (REVERSING: a later run no longer finds the break, or
 *   finds another difference) or undone (REVERSED); `adjustments` numbers them (a re-accepted break
 *   posts under a new key).
 * - breaks.linked_case: the case whose correcting entry of the same movement the break was resolved
 *   with (resolution 'linked': no entry of its own).
 */
export class Migration0003OneCasePerMovement extends Migration {
  override name = '0003-one-case-per-movement';

  override up(): void {
    this.addSql('alter table reconciliation.runs add column if not exists covers_until timestamptz');
    this.addSql(`update reconciliation.runs set covers_until = least(started_at, ((date + 1)::timestamp + interval '5 hours') at time zone 'UTC')
      where covers_until is null`);
    this.addSql(`alter table reconciliation.breaks
      add column if not exists movement text,
      add column if not exists adjustment_key text,
      add column if not exists adjustment_state text check (adjustment_state in ('POSTED', 'REVERSING', 'REVERSED')),
      add column if not exists adjustments int not null default 0,
      add column if not exists adjusted_cents bigint,
      add column if not exists linked_case text`);
    this.addSql(`update reconciliation.breaks set movement =
        case when rail <> 'breb-inbound' and our_id is not null then rail || ':our:' || our_id
             when provider_id is not null then rail || ':' || provider_id else rail || ':our:' || coalesce(our_id, '') end
        || case when rail = 'pse' then ':' || split_part(break_key, ':', 5) else '' end
      where movement is null`);
    this.addSql(`update reconciliation.breaks set adjustment_key = 'recon:' || break_key || ':accept_provider', adjustment_state = 'POSTED', adjustments = 1,
        adjusted_cents = difference_cents
      where resolution = 'accept_provider' and difference_cents <> 0 and adjustment_key is null`);
    this.addSql('alter table reconciliation.breaks drop constraint if exists breaks_resolution_check');
    this.addSql(`alter table reconciliation.breaks add constraint breaks_resolution_check
      check (resolution in ('accept_provider', 'explain', 'rerun', 'superseded', 'linked'))`);
    this.addSql(`create index if not exists breaks_movement_idx on reconciliation.breaks (movement)`);
    this.addSql(`create index if not exists breaks_reversing_idx on reconciliation.breaks (break_key) where adjustment_state = 'REVERSING'`);
  }

  override down(): void {
    this.addSql(`alter table reconciliation.breaks drop column if exists movement, drop column if exists adjustment_key,
      drop column if exists adjustment_state, drop column if exists adjustments, drop column if exists linked_case`);
    this.addSql('alter table reconciliation.runs drop column if exists covers_until');
  }
}
