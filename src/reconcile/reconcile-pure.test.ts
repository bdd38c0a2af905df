import { describe, expect, it } from 'vitest';
import { sourceSchema } from '../config/source.js';
import { parseWindowTime } from './format.js';
import { nextCursorFromLink } from './github.js';
import { syntheticBody, syntheticEventId } from './synthetic.js';

describe('reconcile: pure parts', () => {
  it('--since reads ISO times and durations back from now, and refuses anything else', () => {
    const now = Date.parse('2026-12-01T00:00:00Z');
    expect(parseWindowTime('--since', '2026-11-28T00:00Z', now).toISOString()).toBe('2026-11-28T00:00:00.000Z');
    expect(parseWindowTime('--since', '72h', now).toISOString()).toBe('2026-11-28T00:00:00.000Z');
    expect(() => parseWindowTime('--since', 'yesterday', now)).toThrow(/--since: expected an ISO time/);
  });

  it("GitHub's Link header gives the next cursor, and none on the last page", () => {
    const link = '<https://api.github.com/repos/a/b/hooks/1/deliveries?per_page=100&cursor=v1_99>; rel="next", <https://x/?cursor=v1_1>; rel="prev"';
    expect(nextCursorFromLink(link)).toBe('v1_99');
    expect(nextCursorFromLink('<https://x/?cursor=v1_1>; rel="prev"')).toBeNull();
    expect(nextCursorFromLink(undefined)).toBeNull();
  });

  it('a synthetic delivery has one id per resource and state, and the source envelope around the resource', () => {
    expect(syntheticEventId('inv_1', 'paid')).toBe('reconcile:inv_1:paid');
    const resource = { id: 'inv_1', status: 'paid', amount: 4990 };
    const occurredAt = new Date('2026-11-28T10:00:00Z');
    const input = { eventId: 'reconcile:inv_1:paid', eventType: 'invoice.paid', occurredAt, resource };
    expect(JSON.parse(syntheticBody('paymos', input).toString())).toEqual({
      event_id: 'reconcile:inv_1:paid',
      event_type: 'invoice.paid',
      version: 'reconcile',
      occurred_at: '2026-11-28T10:00:00.000Z',
      data: resource,
    });
    expect(JSON.parse(syntheticBody('standard', input).toString())).toEqual({ type: 'invoice.paid', timestamp: '2026-11-28T10:00:00.000Z', data: resource });
    expect(JSON.parse(syntheticBody('stripe', input).toString())).toMatchObject({
      id: 'reconcile:inv_1:paid',
      type: 'invoice.paid',
      created: 1795860000,
      data: { object: resource },
    });
  });

  it("a source's reconcile block: defaults per provider, and mistakes named by path", () => {
    const base = { scheme: 'paymos', secrets: ['whsec_x'] };
    const generic = sourceSchema.parse({
      ...base,
      reconcile: { provider: 'generic', url: 'https://api.example/v1/invoices', auth: { kind: 'bearer', token: 't' } },
    });
    expect(generic.reconcile).toMatchObject({
      statuses: ['paid', 'paid_over'],
      envelope: 'paymos',
      page_size: 100,
      lookback: 72 * 3_600_000,
      apply: false,
      max_wait: 60_000,
    });
    const stripe = sourceSchema.parse({ ...base, reconcile: { provider: 'stripe', api_key: 'sk', every: '24h' } });
    expect(stripe.reconcile).toMatchObject({ api_base: 'https://api.stripe.com', every: 86_400_000 });
    const github = sourceSchema.parse({ ...base, reconcile: { provider: 'github', api_key: 'g', repo: 'org:acme', hook_id: 12 } });
    expect(github.reconcile).toMatchObject({ hook_id: '12', api_base: 'https://api.github.com' });
    expect(sourceSchema.safeParse({ ...base, reconcile: { provider: 'stripe', api_key: 'sk', every: '10s' } }).success).toBe(false);
    expect(sourceSchema.safeParse({ ...base, reconcile: { provider: 'generic', url: 'https://x', auth: { kind: 'basic' } } }).success).toBe(false);
    expect(sourceSchema.safeParse({ ...base, reconcile: { provider: 'stripe', api_key: 'sk', typo: 1 } }).success).toBe(false);
  });

  it('the mercanpay preset fills in the list shape; what the source sets wins, key by key', () => {
    const base = { scheme: 'paymos', secrets: ['whsec_x'] };
    const auth = { kind: 'bearer', token: 't' };
    const mercan = sourceSchema.parse({ ...base, reconcile: { preset: 'mercanpay', url: 'https://mercanpay.example/api/invoices', auth } });
    expect(mercan.reconcile).toMatchObject({
      provider: 'generic',
      preset: 'mercanpay',
      statuses: ['paid', 'overpaid'],
      one_status_per_call: true,
      envelope: 'mercanpay',
      params: { status: 'status', limit: 'limit', cursor: 'before', since: null, until: null },
      paths: { items: 'data', next_cursor: 'next_before', id: 'id', status: 'status' },
    });
    const tuned = sourceSchema.parse({
      ...base,
      reconcile: { preset: 'mercanpay', url: 'https://m.example/i', auth, statuses: ['paid'], paths: { id: 'token' }, page_size: 50 },
    });
    expect(tuned.reconcile).toMatchObject({ statuses: ['paid'], page_size: 50, paths: { items: 'data', next_cursor: 'next_before', id: 'token' } });
    const unknown = sourceSchema.safeParse({ ...base, reconcile: { preset: 'nopay', url: 'https://x.example', auth } });
    expect(unknown.success).toBe(false);
    expect(JSON.stringify(unknown.error?.issues)).toContain('mercanpay');
    // Without a preset nothing changes: the generic defaults.
    const generic = sourceSchema.parse({ ...base, reconcile: { provider: 'generic', url: 'https://x.example', auth } });
    expect(generic.reconcile).toMatchObject({ one_status_per_call: false, params: { cursor: 'cursor', since: 'updated_since' }, paths: { items: 'items' } });
    const input = { eventId: 'reconcile:inv_1:paid', eventType: 'invoice.paid', occurredAt: new Date('2026-11-28T10:00:00Z'), resource: { id: 'inv_1' } };
    expect(JSON.parse(syntheticBody('mercanpay', input).toString())).toEqual({
      id: 'reconcile:inv_1:paid',
      type: 'invoice.paid',
      created_at: '2026-11-28T10:00:00.000Z',
      data: { invoice: { id: 'inv_1' } },
    });
  });
});
