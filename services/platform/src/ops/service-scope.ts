import type { Logger } from 'pino';
import { Bus, type StreamName } from '../bus/bus.js';
import { OutboxRelay } from '../bus/outbox.js';
import { Database, type DatabaseOptions } from '../db/database.js';
import { OpsServer, type ReadinessCheck } from './ops-server.js';

export interface ServiceInfraOptions {
  /** Process name: bus connection name and the outbox events' `ce-source`. */
  name: string;
  schema: string;
  databaseUrl: string;
  migrations: DatabaseOptions['migrations'];
  /** Indexes on existing tables, built online after the migrations (docs/migrations.md "Online indexes"). */
  onlineIndexes?: DatabaseOptions['onlineIndexes'];
  poolMax?: number;
  migrateOnStart: boolean;
  /** NODE_ENV=production: refuse a database role that could rewrite history (Database.assertLeastPrivilege). */
  production?: boolean;
  natsUrl: string;
  namespace: string;
  /** JetStream stream replicas (NATS_STREAM_REPLICAS; 1 by default). */
  streamReplicas?: number;
  /** Streams this process publishes to or reads from (created if missing). */
  streams: StreamName[];
  /** The outbox relay's settings; `false` for a process that publishes nothing. */
  relay: ConstructorParameters<typeof OutboxRelay>[4] | false;
}

/**
 * What every service's composition root does around its own use cases: open Postgres (migrated when
 * asked) and NATS, start the outbox relay and the ops server, and stop it all in reverse order —
 * once, bounded by each step — whether start-up failed half-way or the process is shutting down.
 */
export class ServiceScope {
  private readonly cleanups: Array<() => Promise<void>> = [];
  private stopped: Promise<void> | undefined;
  private opsServer: OpsServer | undefined;

  constructor(private readonly log: Logger) {}

  /** Runs `fn` at stop, before everything registered earlier. */
  defer(fn: () => Promise<void> | void): void {
    this.cleanups.push(async () => {
      await fn();
    });
  }

  async infra(o: ServiceInfraOptions): Promise<{ db: Database; bus: Bus; relay: OutboxRelay | undefined }> {
    const db = await Database.open({
      url: o.databaseUrl,
      schema: o.schema,
      migrations: o.migrations,
      ...(o.onlineIndexes ? { onlineIndexes: o.onlineIndexes } : {}),
      logger: this.log,
      poolMax: o.poolMax,
    });
    this.defer(() => db.close());
    if (o.production) await db.assertLeastPrivilege('runtime');
    if (o.migrateOnStart) {
      const applied = await db.migrate();
      if (applied.length > 0) this.log.info({ applied }, 'migrations applied');
    }
    const bus = await Bus.connect({
      url: o.natsUrl,
      namespace: o.namespace,
      name: o.name,
      logger: this.log,
      ...(o.streamReplicas ? { replicas: o.streamReplicas } : {}),
    });
    this.defer(() => bus.close());
    for (const s of o.streams) await bus.ensureStream(s);
    let relay: OutboxRelay | undefined;
    if (o.relay !== false) {
      const r = new OutboxRelay(db, bus, o.name, this.log, o.relay);
      r.start();
      this.defer(() => r.stop());
      relay = r;
    }
    return { db, bus, relay };
  }

  /**
   * /healthz, /readyz (Postgres, NATS and `extra` checks) and /metrics; closed last, so probes keep
   * answering "not ready" until the very end of a shutdown. `port: null` starts no listener.
   */
  async ops(db: Database, bus: Bus, port: number | null, host = '0.0.0.0', extra: ReadinessCheck[] = []): Promise<{ ops: OpsServer; opsPort: number | null }> {
    const ops = new OpsServer([{ name: 'postgres', check: () => db.ping() }, { name: 'nats', check: () => bus.ping() }, ...extra], this.log);
    const opsPort = port === null ? null : await ops.listen(port, host);
    this.cleanups.unshift(() => ops.close());
    this.opsServer = ops;
    return { ops, opsPort };
  }

  /** Stops everything once (later calls get the same promise): readiness fails first, then the steps in reverse order. */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.opsServer?.drain();
      for (const fn of this.cleanups.reverse()) {
        try {
          await fn();
        } catch (err) {
          this.log.warn({ err: (err as Error).message }, 'cleanup failed');
        }
      }
    })();
    return this.stopped;
  }
}
