import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DestinationGuard } from '../src/http/destination-guard.js';
import { Sender } from '../src/outbox/sender.js';
import { startSink, type Sink } from './helpers/sink.js';

/** The sending side's HTTP attempt, against real sockets: deadlines, refusals and answers. */
describe('outbox: one attempt over HTTP', () => {
  let sender: Sender;
  const sinks: Sink[] = [];
  beforeAll(() => {
    sender = new Sender({ operator: new DestinationGuard(['127.0.0.0/8']), tenants: new DestinationGuard() });
  });
  afterAll(async () => {
    await sender.close(true);
    await Promise.all(sinks.map((s) => s.close()));
  });
  async function sink(...args: Parameters<typeof startSink>): Promise<Sink> {
    const s = await startSink(...args);
    sinks.push(s);
    return s;
  }

  it('the timeout is a deadline: an answer trickled past it is a timeout, cut near the deadline', async () => {
    // Headers at once, then one byte every 100 ms for 3 s: each gap is short, the whole is not.
    const s = await sink(() => ({ status: 200, trickle: { bytes: 30, everyMs: 100 } }));
    const outcome = await sender.send({ url: s.url, body: Buffer.from('{}'), headers: {}, timeoutMs: 600 });
    expect(outcome.error).toBe('timeout after 600 ms');
    expect(outcome.succeeded).toBe(false);
    expect(outcome.durationMs).toBeGreaterThanOrEqual(590);
    // Cut at the deadline, not after the 3 s the whole answer takes.
    expect(outcome.durationMs).toBeLessThan(2_500);
  });

  it('a 4xx answer is a failure with its status, Retry-After read, and the answer kept only in the history', async () => {
    const s = await sink(() => ({ status: 429, headers: { 'retry-after': '7' }, body: 'slow down' }));
    const outcome = await sender.send({ url: s.url, body: Buffer.from('{}'), headers: {}, timeoutMs: 2_000 });
    expect(outcome).toMatchObject({ succeeded: false, statusCode: 429, error: 'HTTP 429', responseBody: 'slow down', retryAfterMs: 7_000, unsendable: false });
    const gone = await sink(() => ({ status: 410, body: 'no such hook' }));
    expect(await sender.send({ url: gone.url, body: Buffer.from('{}'), headers: {}, timeoutMs: 2_000 })).toMatchObject({
      succeeded: false,
      statusCode: 410,
      error: 'HTTP 410',
    });
  });

  it('a refused connection is a network failure, retried on the ladder', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const outcome = await sender.send({ url: `http://127.0.0.1:${port}/hook`, body: Buffer.from('{}'), headers: {}, timeoutMs: 2_000 });
    expect(outcome).toMatchObject({ succeeded: false, statusCode: null, unsendable: false });
    expect(outcome.error).toMatch(/^ECONNREFUSED/);
  });

  it('errors name no header, secret or body: a refused header value is reported by name only', async () => {
    const s = await sink();
    const secretish = 'v1,c2VjcmV0LXNpZ25hdHVyZQ==\n';
    const outcome = await sender.send({ url: s.url, body: Buffer.from('{"card":"4111"}'), headers: { 'webhook-signature': secretish }, timeoutMs: 2_000 });
    expect(outcome).toMatchObject({ succeeded: false, statusCode: null, unsendable: true });
    expect(outcome.error).not.toContain('c2VjcmV0');
    expect(outcome.error).not.toContain('4111');
    expect(s.requests).toHaveLength(0);
  });
});
