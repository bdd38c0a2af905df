import type { FastifyInstance } from 'fastify';
import { parseConfig, type ConfigInput, type TekilConfig } from '../../src/config/index.js';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/logger.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { createScheme } from '../../src/signing/index.js';
import type { Context } from '../../src/service.js';
import type { Db } from '../../src/store/db.js';
import { resolveSettings } from '../../src/settings.js';

export const STANDARD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const PAYMOS_SECRET = 'whsec_paymos_test_secret';

/** Two sources of different schemes: enough to exercise both id-from-header and id-from-body. */
export function receiverConfig(extra: Partial<ConfigInput> = {}): TekilConfig {
  return parseConfig({
    server: { body_limit: 64 * 1024 },
    sources: {
      demo: { scheme: 'standard', secrets: [STANDARD_SECRET], tolerance: 300 },
      shop: { scheme: 'paymos', secrets: [PAYMOS_SECRET], tolerance: 300 },
    },
    ...extra,
  });
}

export function testContext(db: Db, config: TekilConfig): Context {
  return { config, settings: resolveSettings(config, {}), db, logger: createLogger({ level: 'silent' }), metrics: createMetricsRegistry(false) };
}

export async function receiverApp(db: Db, config: TekilConfig = receiverConfig()): Promise<{ app: FastifyInstance; ctx: Context }> {
  const ctx = testContext(db, config);
  const app = await buildApp({ ctx, roles: new Set(['receiver']) });
  return { app, ctx };
}

/** A Paymos-style envelope; `eventId` is both the delivery id and (by default) part of the body. */
export function paymosBody(eventId: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    event_id: eventId,
    event_type: 'invoice.paid',
    version: 1,
    occurred_at: '2026-11-29T10:00:00Z',
    data: { invoice_id: `inv_${eventId}`, amount: '12.50' },
    ...extra,
  });
}

export function signPaymos(body: string | Buffer, options: { secret?: string; timestamp?: number; id?: string } = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...createScheme('paymos').sign({
      body,
      secrets: [options.secret ?? PAYMOS_SECRET],
      ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
      ...(options.id !== undefined ? { id: options.id } : {}),
    }),
  };
}

export function signStandard(body: string | Buffer, id: string, options: { secret?: string; timestamp?: number } = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...createScheme('standard').sign({
      body,
      secrets: [options.secret ?? STANDARD_SECRET],
      id,
      ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
    }),
  };
}

export async function countRows(db: Db, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM inbox_deliveries WHERE ${where}`, params);
  return rows[0]!.n;
}
