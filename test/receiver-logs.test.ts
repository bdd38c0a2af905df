import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createTestDb, type TestDb } from './helpers/db.js';
import { PAYMOS_SECRET, STANDARD_SECRET, paymosBody, receiverConfig, signPaymos, signStandard, testContext } from './helpers/receiver.js';
import { rawRequest } from './helpers/raw-http.js';
import { buildApp } from '../src/app.js';
import { redactPaths } from '../src/logger.js';

const ADMIN_TOKEN = 'ADMIN-TOKEN-MARKER-4410';
/** Buffers in a JSON log line are written as byte arrays; decode them so their text is checked too. */
function decodedBuffers(lines: readonly string[]): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    const o = v as { type?: unknown; data?: unknown };
    if (o.type === 'Buffer' && Array.isArray(o.data)) out.push(Buffer.from(o.data as number[]).toString('latin1'));
    for (const child of Object.values(o)) walk(child);
  };
  for (const line of lines) walk(JSON.parse(line));
  return out.join('\n');
}

const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

/**
 * Logs never carry a secret, a signature, the admin token or a body, at any level — including
 * Fastify's client-error line, which at trace level carries the request's raw bytes.
 */
describe('logs at every level', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(levels)('at %s: no secret, signature, token or body in the output', async (level) => {
    const lines: string[] = [];
    const ctx = testContext(t.db, receiverConfig());
    // tekil's logger settings, writing into memory.
    ctx.logger = pino({ level, redact: { paths: redactPaths, censor: '[redacted]' } }, { write: (line: string) => void lines.push(line) });
    const app = await buildApp({ ctx, roles: new Set(['receiver', 'api']), adminToken: ADMIN_TOKEN });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const secrets: string[] = [ADMIN_TOKEN, PAYMOS_SECRET, STANDARD_SECRET, 'BODY-MARKER-7781', 'AUTH-MARKER-5521'];
    try {
      const body = paymosBody(`evt_log_${level}`, { note: 'BODY-MARKER-7781' });
      const signed = signPaymos(body);
      secrets.push(signed['X-Webhook-Signature']!.split('v1=')[1]!);
      const asLines = (h: Record<string, string>) => Object.entries(h) as Array<[string, string]>;

      // A signed webhook, accepted; the same with a wrong secret, refused.
      expect((await rawRequest(url, { path: '/in/shop', headers: [...asLines(signed), ['Authorization', 'Bearer AUTH-MARKER-5521']], body })).status).toBe(200);
      const wrong = signPaymos(body, { secret: 'whsec_WRONG-SECRET-MARKER' });
      secrets.push('WRONG-SECRET-MARKER', wrong['X-Webhook-Signature']!.split('v1=')[1]!);
      expect((await rawRequest(url, { path: '/in/shop', headers: asLines(wrong), body })).status).toBe(401);
      const standard = signStandard(body, `msg_log_${level}`);
      secrets.push(standard['webhook-signature']!.slice(3));
      expect((await rawRequest(url, { path: '/in/demo', headers: asLines(standard), body })).status).toBe(200);

      // An authorized admin call, and one with a wrong token.
      expect((await rawRequest(url, { method: 'GET', path: '/api/v1/inbox', headers: [['Authorization', `Bearer ${ADMIN_TOKEN}`]] })).status).toBe(200);
      expect((await rawRequest(url, { method: 'GET', path: '/api/v1/inbox', headers: [['Authorization', 'Bearer AUTH-MARKER-5521']] })).status).toBe(401);

      // A request the HTTP parser refuses (a header line without a colon), carrying the token, a
      // signature and a body: Fastify answers it from its clientError handler.
      const broken = await rawRequest(url, {
        path: '/in/shop',
        headers: [...asLines(signed), ['Authorization', `Bearer ${ADMIN_TOKEN}`], ['Broken header line', '']],
        body,
      });
      expect(broken.status).toBe(400);
    } finally {
      await app.close();
    }
    const text = lines.join('') + decodedBuffers(lines);
    if (level === 'trace') expect(text).toContain('client error'); // the line exists, and is clean:
    for (const secret of secrets) expect(text, `log output at ${level}`).not.toContain(secret);
  });
});
