import { z } from 'zod';
import { baseEnvSchema, ConfigError, env, parseConfig } from './config.js';

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
