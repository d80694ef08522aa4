import type { z } from 'zod';
import { ConfigError, declaredVariables } from '../config/config.js';
import { DEVELOPMENT_SECRET_VALUES, isSecretVariable, SECRET_VARIABLES, type SecretSpec } from '../config/dev-secrets.js';

/**
 * Names that say "secret": they must be declared in dev-secrets.ts. Paths to files (`*_KEY_FILE`)
 * and names such as RATE_LIMIT_RESOLVE_KEY (a limit of the resolve-key route) are not secrets.
 */
const SECRET_LIKE = /(SECRET|PEPPER|TOKEN|PASSWORD|PASSPHRASE)$|(PRIVATE|SECRET|DATA|ENCRYPTION|SIGNING|HMAC|API|MASTER|LOOKUP|HASH)_KEY$/;

function problemsOf(load: (env: Record<string, string | undefined>) => unknown, env: Record<string, string | undefined>): string[] | null {
  try {
    load(env);
    return null;
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    return [`(not a ConfigError: ${(err as Error).name})`];
  }
}

/**
 * What a process's `loadConfig` gets wrong about development secrets in production; [] when nothing.
 * `production`: a production environment with a proper value for every secret the process reads.
 * Checks that it loads; that each secret, unset or equal to / containing any development value,
 * is refused with an error naming it and not showing the value; that a development value inside
 * DATABASE_URL is refused too; and that every variable whose name says "secret" is registered.
 */
export function productionSecretFailures(
  load: (env: Record<string, string | undefined>) => unknown,
  schema: z.ZodType,
  production: Record<string, string>,
): string[] {
  const failures: string[] = [];
  const variables = declaredVariables(schema);
  if (!variables) return ['the schema is not an object schema: its variables cannot be listed'];
  const ok = problemsOf(load, { ...production, NODE_ENV: 'production' });
  if (ok) failures.push(`a proper production environment is refused: ${ok.join('; ')}`);

  for (const name of variables) {
    if (SECRET_LIKE.test(name) && !isSecretVariable(name)) failures.push(`${name} looks like a secret but is not declared in platform dev-secrets.ts`);
  }
  const secrets = variables.filter(isSecretVariable);
  const cases: Array<[string, string | undefined]> = [];
  for (const name of secrets) {
    // A secret production may leave unset (its feature is then off) is still never a development value.
    if (!(SECRET_VARIABLES[name as keyof typeof SECRET_VARIABLES] as SecretSpec).optionalInProduction) cases.push([name, undefined]);
    for (const dev of DEVELOPMENT_SECRET_VALUES) cases.push([name, dev], [name, `${dev}-2024`], [name, `prefix-${dev.toUpperCase()}`]);
  }
  for (const dev of DEVELOPMENT_SECRET_VALUES) cases.push(['DATABASE_URL', `postgresql://wallet:${dev}@db:5432/wallet`]);
  for (const [name, value] of cases) {
    const env = { ...production, NODE_ENV: 'production', [name]: value };
    const problems = problemsOf(load, env);
    const shown = value === undefined ? 'unset' : `a development value (${value.length} characters)`;
    if (!problems) failures.push(`${name} ${shown} is accepted in production`);
    else if (!problems.some((p) => p.startsWith(`${name}:`))) failures.push(`${name} ${shown} is refused without naming ${name}`);
    else if (value !== undefined && DEVELOPMENT_SECRET_VALUES.some((d) => problems.join('\n').toLowerCase().includes(d.toLowerCase()))) {
      failures.push(`${name}: the error shows the value`);
    }
  }
  return failures;
}
