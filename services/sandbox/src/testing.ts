import { createLogger } from '@wallet/platform';
import { composeSandbox } from './compose.js';
import { loadConfig } from './config.js';

export interface StartedSandbox {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The SMTP sink's port (on 127.0.0.1). */
  smtpPort: number;
  stop(): Promise<void>;
}

/**
 * The whole sandbox in this process, for integration and end-to-end tests: migrates the
 * database and serves HTTP on 127.0.0.1 (port 0 or omitted = ephemeral). `env` overrides the
 * configuration, e.g. `{ SANDBOX_BREB_CONFIRM_MS: '200' }`; process.env is not read. The SMTP
 * sink takes an ephemeral port unless `env.SANDBOX_SMTP_PORT` says otherwise ('0' = ephemeral);
 * `env.SANDBOX_PUBLIC_URL` defaults to the sandbox's own URL.
 */
export async function startSandbox(opts: { databaseUrl: string; port?: number; env?: Record<string, string> }): Promise<StartedSandbox> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    SANDBOX_HOST: '127.0.0.1',
    SANDBOX_SMTP_PORT: '0',
    // A test stack runs every service in one process, two files at a time: small pools keep it
    // well under the server's connection limit.
    SANDBOX_DB_POOL_MAX: '4',
    ...opts.env,
    DATABASE_URL: opts.databaseUrl,
    SANDBOX_PORT: String(opts.port ?? 0),
    SANDBOX_MIGRATE_ON_START: 'true',
  });
  const runtime = await composeSandbox(config, createLogger('sandbox', config.LOG_LEVEL));
  const host = config.SANDBOX_HOST === '0.0.0.0' ? '127.0.0.1' : config.SANDBOX_HOST;
  return { url: `http://${host}:${runtime.port}`, port: runtime.port, smtpPort: runtime.smtpPort, stop: () => runtime.stop() };
}
