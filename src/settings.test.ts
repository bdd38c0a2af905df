import { describe, expect, it } from 'vitest';
import { parseConfig } from './config/load.js';
import { isTekilError } from './errors.js';
import { resolveSettings } from './settings.js';

describe('resolveSettings', () => {
  const config = parseConfig({ store: { url: 'postgres://file/db', data_dir: '/from/file' } });

  it('takes the environment over the file, and the file over the defaults', () => {
    expect(resolveSettings(config, { DATABASE_URL: 'postgres://env/db', TEKIL_DATA_DIR: '/from/env' })).toMatchObject({
      databaseUrl: 'postgres://env/db',
      dataDir: '/from/env',
    });
    expect(resolveSettings(config, {})).toMatchObject({ databaseUrl: 'postgres://file/db', dataDir: '/from/file' });
    expect(resolveSettings(parseConfig({}), {})).toEqual({
      databaseUrl: undefined,
      dataDir: './.tekil',
      secretKey: { from: 'file', dataDir: './.tekil' },
      adminToken: undefined,
      logLevel: 'info',
      otlpEndpoint: undefined,
      port: undefined,
      metricsToken: undefined,
    });
  });

  it('takes the HTTP port from PORT, and refuses one that is not a port', () => {
    expect(resolveSettings(config, { PORT: '9090' }).port).toBe(9090);
    expect(resolveSettings(config, { PORT: '' }).port).toBeUndefined();
    expect(() => resolveSettings(config, { PORT: 'http' })).toThrow(/PORT: expected a port number/);
    expect(() => resolveSettings(config, { PORT: '70000' })).toThrow(/PORT: expected a port number/);
  });

  it('treats empty variables as unset (DATABASE_URL= means the embedded store)', () => {
    const settings = resolveSettings(parseConfig({}), { DATABASE_URL: '', TEKIL_SECRET_KEY: '', TEKIL_ADMIN_TOKEN: '', TEKIL_LOG_LEVEL: '' });
    expect(settings).toMatchObject({ databaseUrl: undefined, secretKey: { from: 'file' }, adminToken: undefined, logLevel: 'info' });
  });

  it('keeps the operator key and token as given; the generated key file sits in the data dir', () => {
    expect(resolveSettings(config, { TEKIL_SECRET_KEY: 'k', TEKIL_ADMIN_TOKEN: 't' })).toMatchObject({ secretKey: { from: 'env', key: 'k' }, adminToken: 't' });
    expect(resolveSettings(config, { TEKIL_DATA_DIR: '/d' }).secretKey).toEqual({ from: 'file', dataDir: '/d' });
  });

  it('accepts pino levels in any case and refuses others with CONFIG_INVALID and a hint', () => {
    expect(resolveSettings(config, { TEKIL_LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
    let thrown: unknown;
    try {
      resolveSettings(config, { TEKIL_LOG_LEVEL: 'verbose' });
    } catch (err) {
      thrown = err;
    }
    expect(isTekilError(thrown) && thrown.code).toBe('CONFIG_INVALID');
    expect(isTekilError(thrown) && thrown.hint).toMatch(/trace, debug, info/);
  });
});
