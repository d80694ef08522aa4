import { z } from 'zod';
import { baseEnvSchema, ConfigError, declaredVariables, env, parseConfig } from './config.js';
import { containsDevelopmentSecret, DEVELOPMENT_SECRET_VALUES, SECRET_VARIABLES } from './dev-secrets.js';

describe('parseConfig', () => {
  const schema = baseEnvSchema.extend({ PORT: env.port(8080), FLAG: env.bool(false), NAME: env.str() });

  it('applies defaults and coerces types', () => {
    const cfg = parseConfig(schema, { NAME: 'x' });
    expect(cfg.PORT).toBe(8080);
    expect(cfg.FLAG).toBe(false);
    expect(cfg.NODE_ENV).toBe('development');
    expect(parseConfig(schema, { NAME: 'x', FLAG: 'true', PORT: '9000' })).toMatchObject({ FLAG: true, PORT: 9000 });
  });

  it('lists every bad variable at once', () => {
    try {
      parseConfig(schema, { PORT: 'abc', FLAG: 'maybe', NODE_ENV: 'staging' });
      throw new Error('should have failed');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      for (const v of ['PORT', 'FLAG', 'NODE_ENV', 'NAME']) expect(problems).toContain(v);
    }
  });

  it('works with any zod schema', () => {
    expect(parseConfig(z.object({ A: z.string().default('a') }), {})).toEqual({ A: 'a' });
  });
});

describe('development secrets in production', () => {
  const schema = baseEnvSchema.extend({ RAIL_CALLBACK_SECRET: env.secret('RAIL_CALLBACK_SECRET'), SMTP_URL: env.str('smtp://127.0.0.1:2525') });
  const problemsOf = (source: Record<string, string>): string => {
    try {
      parseConfig(schema, source);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems.join('\n');
    }
    return '';
  };

  it('uses the development default outside production', () => {
    expect(parseConfig(schema, {}).RAIL_CALLBACK_SECRET).toBe(SECRET_VARIABLES.RAIL_CALLBACK_SECRET.dev);
    expect(parseConfig(schema, { NODE_ENV: 'test' }).RAIL_CALLBACK_SECRET).toBe(SECRET_VARIABLES.RAIL_CALLBACK_SECRET.dev);
  });

  it('refuses an unset secret, naming it', () => {
    expect(problemsOf({ NODE_ENV: 'production' })).toMatch(/^RAIL_CALLBACK_SECRET: required in production/m);
  });

  it('refuses any development value, equal or contained, in any secret or other variable, without printing it', () => {
    for (const dev of DEVELOPMENT_SECRET_VALUES) {
      for (const value of [dev, `${dev}-2`, `x${dev.toUpperCase()}x`]) {
        const text = problemsOf({ NODE_ENV: 'production', RAIL_CALLBACK_SECRET: value });
        expect(text).toMatch(/^RAIL_CALLBACK_SECRET: contains a development secret/m);
        expect(text).not.toContain(dev);
      }
    }
    const text = problemsOf({
      NODE_ENV: 'production',
      RAIL_CALLBACK_SECRET: 'a-real-production-secret',
      SMTP_URL: `smtp://u:${SECRET_VARIABLES.ADMIN_TOKEN.dev}@mail:587`,
    });
    expect(text).toMatch(/^SMTP_URL: contains a development secret/m);
    expect(text).not.toContain(SECRET_VARIABLES.ADMIN_TOKEN.dev);
  });

  it('accepts a proper secret and keeps the minimum length in every environment', () => {
    expect(parseConfig(schema, { NODE_ENV: 'production', RAIL_CALLBACK_SECRET: 'a-real-production-secret' }).RAIL_CALLBACK_SECRET).toBe(
      'a-real-production-secret',
    );
    expect(problemsOf({ NODE_ENV: 'test', RAIL_CALLBACK_SECRET: 'short' })).toMatch(/RAIL_CALLBACK_SECRET: must be at least 16 characters/);
  });

  it('lists schema problems and secret problems together', () => {
    const text = problemsOf({ NODE_ENV: 'production', LOG_LEVEL: 'loud' });
    expect(text).toMatch(/LOG_LEVEL/);
    expect(text).toMatch(/RAIL_CALLBACK_SECRET/);
  });

  it('finds the variables behind refinements and pipes', () => {
    expect(declaredVariables(schema.superRefine(() => undefined))).toContain('RAIL_CALLBACK_SECRET');
    expect(declaredVariables(schema.transform((x) => x))).toContain('RAIL_CALLBACK_SECRET');
  });

  it('every registered secret has a development default of its own minimum length, refused by the containment rule', () => {
    for (const [name, spec] of Object.entries(SECRET_VARIABLES)) {
      expect(spec.dev.length).toBeGreaterThanOrEqual(spec.min);
      expect(containsDevelopmentSecret(spec.dev)).toBe(true);
      expect(name).toMatch(/^[A-Z][A-Z0-9_]+$/);
    }
  });
});
