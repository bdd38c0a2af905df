import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { describeAnswer, isSuccess, parseEffects, postOnce } from './http.js';

const URL_ = 'http://shop/_prove/effects';

describe('the effects contract', () => {
  it('takes {count, state} objects and bare counts; extra fields are ignored', () => {
    const effects = parseEffects('{"inv_a": {"count": 1, "state": "paid", "note": "x"}, "inv_b": 0, "inv_c": {"count": 2}}', URL_);
    expect([...effects]).toEqual([
      ['inv_a', { count: 1, state: 'paid' }],
      ['inv_b', { count: 0 }],
      ['inv_c', { count: 2 }],
    ]);
  });

  it('a null state is an unknown one, as SQL behind the route answers for an invoice with no state yet', () => {
    const effects = parseEffects('{"inv_a": {"count": 0, "state": null}, "inv_b": {"count": 1, "state": "paid"}}', URL_);
    expect([...effects]).toEqual([
      ['inv_a', { count: 0 }],
      ['inv_b', { count: 1, state: 'paid' }],
    ]);
  });

  it('anything else is PROVE_EFFECTS_INVALID, saying where', () => {
    expect(() => parseEffects('<html>', URL_)).toThrow(
      expect.objectContaining({ code: 'PROVE_EFFECTS_INVALID', message: `the effects at ${URL_} are not JSON` }),
    );
    expect(() => parseEffects('[1, 2]', URL_)).toThrow(expect.objectContaining({ code: 'PROVE_EFFECTS_INVALID' }));
    expect(() => parseEffects('{"inv_a": {"count": -1}}', URL_)).toThrow(/do not follow the contract \(at inv_a/);
    expect(() => parseEffects('{"inv_a": "1"}', URL_)).toThrow(/at inv_a/);
    expect(() => parseEffects('{"inv_a": 1.5}', URL_)).toThrow(/at inv_a/);
    expect(() => parseEffects('{"inv_a": {"count": 1, "state": 3}}', URL_)).toThrow(/at inv_a/);
    expect(() => parseEffects('{"inv_a": {"count": null, "state": "paid"}}', URL_)).toThrow(/at inv_a/);
  });
});

describe('an answer the provider waits for by its body (PayTR: exactly OK)', () => {
  it('a 2xx counts only with that exact body; without an expected body any 2xx does', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(req.url === '/ok' ? 'OK' : '{"status":"ok"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ok = await postOnce(`${base}/ok`, Buffer.from('a=1'), {}, 2_000, 'OK');
      expect(isSuccess(ok)).toBe(true);
      const json = await postOnce(`${base}/json`, Buffer.from('a=1'), {}, 2_000, 'OK');
      expect(isSuccess(json)).toBe(false);
      expect(describeAnswer(json)).toBe('HTTP 200 with body "{\\"status\\":\\"ok\\"}", not the "OK" the provider waits for');
      expect(isSuccess(await postOnce(`${base}/json`, Buffer.from('{}'), {}, 2_000))).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
