import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { paymosBody, receiverConfig, signPaymos, testContext } from './helpers/receiver.js';
import { waitUntil } from './helpers/wait.js';

const ADMIN = 'dashboard-events-admin';

interface StreamedChange {
  source: string;
  event_id: string;
  status: string;
}

/** Opens the event stream over a real socket and collects its `delivery` events. */
async function openStream(url: string, headers: Record<string, string>) {
  const res = await request(url, { headers });
  const events: StreamedChange[] = [];
  let buffer = '';
  const reading = (async () => {
    for await (const chunk of res.body) {
      buffer += (chunk as Buffer).toString('utf8');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (block.includes('event: delivery') && data) events.push(JSON.parse(data.slice(6)) as StreamedChange);
      }
    }
  })().catch(() => undefined);
  return {
    status: res.statusCode,
    headers: res.headers,
    events,
    close: async () => {
      res.body.destroy();
      await reading;
    },
  };
}

describe('live event stream (server-sent events)', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let base: string;

  const postWebhook = async (eventId: string) => {
    const body = paymosBody(eventId);
    const res = await request(`${base}/in/shop`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signPaymos(body) } });
    await res.body.text();
    expect(res.statusCode).toBe(200);
  };

  beforeAll(async () => {
    t = await createTestDb();
    app = await buildApp({ ctx: testContext(t.db, receiverConfig()), roles: new Set(['receiver', 'api']), adminToken: ADMIN });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
  });

  it('needs credentials', async () => {
    const res = await request(`${base}/api/v1/events`);
    expect(res.statusCode).toBe(401);
    await res.body.text();
  });

  it('streams a webhook as it is received, and its change of state (which notifies nothing) by polling', async () => {
    const stream = await openStream(`${base}/api/v1/events`, { authorization: `Bearer ${ADMIN}` });
    try {
      expect(stream.status).toBe(200);
      expect(String(stream.headers['content-type'])).toMatch(/^text\/event-stream/);
      await postWebhook('evt_live_1');
      await waitUntil(() => stream.events.some((e) => e.event_id === 'evt_live_1' && e.status === 'pending'));
      // Settled as a worker would settle it.
      await t.db.query(`UPDATE inbox_deliveries SET status = 'done', processed_at = now(), attempts = 1 WHERE event_id = 'evt_live_1'`);
      await waitUntil(() => stream.events.some((e) => e.event_id === 'evt_live_1' && e.status === 'done'));
      // Each change once, however many polls saw it.
      expect(stream.events.filter((e) => e.event_id === 'evt_live_1')).toHaveLength(2);
    } finally {
      await stream.close();
    }
  });

  it('works with the session cookie, the way the browser opens it', async () => {
    const signIn = await request(`${base}/api/v1/session`, {
      method: 'POST',
      body: JSON.stringify({ token: ADMIN }),
      headers: { 'content-type': 'application/json' },
    });
    await signIn.body.text();
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const stream = await openStream(`${base}/api/v1/events`, { cookie });
    try {
      expect(stream.status).toBe(200);
      await postWebhook('evt_live_2');
      await waitUntil(() => stream.events.some((e) => e.event_id === 'evt_live_2'));
    } finally {
      await stream.close();
    }
  });
});
