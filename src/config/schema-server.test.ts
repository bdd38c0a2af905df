import { describe, expect, it } from 'vitest';
import { receiverSchema, serverSchema } from './schema.js';

describe('server and receiver settings', () => {
  it('bound slow clients and the wait for a commit by default', () => {
    expect(serverSchema.parse({})).toMatchObject({ request_timeout: 30_000, headers_timeout: 5_000, keep_alive_timeout: 72_000, max_connections: 500 });
    expect(receiverSchema.parse({}).ack_deadline).toBe(8_000);
  });

  it('bound body bytes in flight and connections per address by default (unset per address: a tenth of max_connections, see app.ts)', () => {
    expect(receiverSchema.parse({}).in_flight_max_bytes).toBe(64 * 1024 * 1024);
    expect(receiverSchema.parse({ in_flight_max_bytes: '8mb' }).in_flight_max_bytes).toBe(8 * 1024 * 1024);
    // Unset per address: a quarter of in_flight_max_bytes, at least body_limit (see the receiver's route).
    expect(receiverSchema.parse({}).in_flight_max_bytes_per_address).toBeUndefined();
    expect(receiverSchema.parse({})).toMatchObject({ body_min_rate: 1024, body_rate_window: 5_000 });
    expect(receiverSchema.parse({ body_min_rate: 0 }).body_min_rate).toBe(0);
    expect(receiverSchema.safeParse({ body_rate_window: '10ms' }).success).toBe(false);
    expect(serverSchema.parse({}).max_connections_per_address).toBeUndefined();
    expect(serverSchema.parse({ max_connections_per_address: 40 }).max_connections_per_address).toBe(40);
    expect(serverSchema.safeParse({ max_connections_per_address: 0 }).success).toBe(false);
  });

  it('read durations with units', () => {
    expect(serverSchema.parse({ request_timeout: '2m', headers_timeout: '500ms' })).toMatchObject({ request_timeout: 120_000, headers_timeout: 500 });
    expect(receiverSchema.parse({ ack_deadline: '5s' }).ack_deadline).toBe(5_000);
  });

  it('refuse a headers timeout longer than the request timeout, and a connection cap below one', () => {
    const longer = serverSchema.safeParse({ request_timeout: '5s', headers_timeout: '10s' });
    expect(longer.success).toBe(false);
    expect(JSON.stringify(longer.error?.issues)).toContain('headers_timeout must not be longer than request_timeout');
    expect(serverSchema.safeParse({ request_timeout: 0, headers_timeout: '10s' }).success).toBe(true);
    expect(serverSchema.safeParse({ max_connections: 0 }).success).toBe(false);
  });

  it('trust no proxy by default, and take a proxy as an address or a network only', () => {
    expect(serverSchema.parse({}).trust_proxy).toEqual([]);
    expect(serverSchema.parse({ trust_proxy: ['10.0.0.5', '10.1.0.0/16', '::1', 'fc00::/7'] }).trust_proxy).toHaveLength(4);
    for (const wrong of ['proxy.internal', '10.0.0.0/33', '10.0.0.300', '*']) {
      expect(serverSchema.safeParse({ trust_proxy: [wrong] }).success, wrong).toBe(false);
    }
  });
});
