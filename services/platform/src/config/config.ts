import { z } from 'zod';
import { developmentSecretProblems, SECRET_VARIABLES, type SecretVariable } from './dev-secrets.js';
import { parsePgUrl } from '../db/primary-host.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once into a typed object. Every bad variable is listed in one error,
 * so an operator fixes them all in one go (habit 9: only main.ts/config.ts read process.env).
 *
 * Every process loads its configuration here, so this is also where production refuses the
 * development secrets (dev-secrets.ts): with NODE_ENV=production, a secret variable the schema
 * declares must be set, and no variable of the schema may contain a development secret.
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  const problems = result.success ? [] : result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
  if (env.NODE_ENV === 'production') {
    const declared = declaredVariables(schema) ?? Object.keys(env);
    problems.push(...developmentSecretProblems(declared, env));
  }
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return result.data;
}

/** The variable names an object schema declares (through refinements and pipes); undefined for other schemas. */
export function declaredVariables(schema: z.ZodType): string[] | undefined {
  if (schema instanceof z.ZodObject) return Object.keys(schema.shape);
  if (schema instanceof z.ZodPipe) return declaredVariables(schema.in as z.ZodType);
  return undefined;
}

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

export const env = {
  port: (def: number) => z.coerce.number().int().min(0).max(65535).default(def),
  int: (def: number, min = 0) => z.coerce.number().int().min(min).default(def),
  bool: (def: boolean) =>
    z
      .string()
      .default(def ? 'true' : 'false')
      .pipe(bool),
  url: (def?: string) => (def === undefined ? z.string().url() : z.string().url().default(def)),
  /** A libpq connection URL, several hosts and target_session_attrs included (parsePgUrl). */
  pgUrl: (def: string) =>
    z
      .string()
      .default(def)
      .superRefine((v, ctx) => {
        try {
          parsePgUrl(v);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: (err as Error).message });
        }
      }),
  str: (def?: string) => (def === undefined ? z.string().min(1) : z.string().min(1).default(def)),
  /**
   * A secret declared in dev-secrets.ts: at least its minimum length when set; unset → its development
   * default, which parseConfig refuses (with any value containing a development secret) in production.
   */
  secret: (name: SecretVariable) => {
    const spec = SECRET_VARIABLES[name];
    return z.string().min(spec.min, `must be at least ${spec.min} characters`).default(spec.dev);
  },
};

/** Variables every process shares. */
export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: env.pgUrl('postgresql://postgres@127.0.0.1:5432/postgres'),
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  /** Prefix for stream names and subjects; lets parallel test runs share one NATS server. */
  BUS_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_]*$/)
    .default(''),
  /** JetStream replicas of the streams this process creates or updates (3 in production, on a 3-node cluster). */
  NATS_STREAM_REPLICAS: env.int(1, 1).pipe(z.number().max(5, 'must be at most 5')),
  SERVICE_INSTANCE_ID: z.string().optional(),
  /** SIGTERM: how long the process may drain before it is forced out (under Kubernetes' 30 s grace). */
  SHUTDOWN_GRACE_MS: env.int(20_000, 500),
});
export type BaseConfig = z.infer<typeof baseEnvSchema>;
