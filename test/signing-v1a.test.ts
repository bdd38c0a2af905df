import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { parseConfig } from '../src/config/load.js';
import { createLogger } from '../src/logger.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createDispatcherService } from '../src/outbox/parts.js';
import { JwksKeys } from '../src/receiver/jwks.js';
import { resolveSettings } from '../src/settings.js';
import type { Context, Service } from '../src/service.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { receiverApp, receiverConfig } from './helpers/receiver.js';
import { startSink, waitUntil, type Sink, type SinkRequest } from './helpers/sink.js';

/**
 * Ed25519 (`v1a`) end to end: tekil's signatures checked by an independent implementation
 * (@noble/curves) against the keys its JWKS route publishes, during a rotation too; and tekil's
 * receiver checking v1a with a configured key and with a JWKS URL (tekil's own route, over a socket).
 */

const TOKEN = 'v1a-test-admin-token';
const TENANT = 'm_v1a';

function signedContent(req: SinkRequest): Buffer {
  return Buffer.concat([Buffer.from(`${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.`), req.body]);
}

/** `v1a` signatures of a request, with the kid webhook-key-id names for each. */
function v1aSignatures(req: SinkRequest): Array<{ kid: string; signature: Buffer }> {
  const kids = String(req.headers['webhook-key-id'] ?? '').split(' ');
  const sigs = String(req.headers['webhook-signature'])
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .map((s) => Buffer.from(s.slice(4), 'base64'));
  expect(kids).toHaveLength(sigs.length);
  return sigs.map((signature, i) => ({ kid: kids[i]!, signature }));
}

function headerMap(req: SinkRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
}

interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  d?: string;
}

describe('v1a: sending, the JWKS route and receiving', () => {
  let t: TestDb;
  let app: FastifyInstance;
  let jwksBase: string;
  let dispatcher: Service;
  let sink: Sink;
  let ctx: Context;
  const endpoints: Record<'v1a' | 'both', string> = { v1a: '', both: '' };
  let bothSecret = '';

  const api = async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${TOKEN}` },
      ...(payload !== undefined ? { payload: payload as object } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };
  const jwks = async (tenant = TENANT) => {
    const res = await fetch(`${jwksBase}/.well-known/webhooks/${tenant}/jwks.json`);
    return { status: res.status, headers: res.headers, body: (await res.json()) as { keys: Jwk[] } };
  };
  const publish = async (n: number) => {
    expect((await api('POST', '/messages', { tenant_id: TENANT, type: 'invoice.paid', data: { n } })).status).toBe(202);
  };
  const requestsOf = (endpoint: 'v1a' | 'both', n: number) =>
    sink.requests.filter((r) => r.path.endsWith(`/${endpoint}`) && JSON.parse(r.body.toString()).data.n === n);

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink();
    const config = parseConfig({
      store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-v1a-')) },
      sending: { allow_networks: ['127.0.0.0/8'], time_scale: 0.001, dispatcher: { poll_interval: '100ms' } },
      tenants: { allow_networks: ['127.0.0.0/8'] },
    });
    ctx = { config, settings: resolveSettings(config, {}), db: t.db, logger: createLogger({ level: 'silent' }), metrics: createMetricsRegistry(false) };
    app = await buildApp({ ctx, roles: new Set(['api']), adminToken: TOKEN });
    jwksBase = await app.listen({ host: '127.0.0.1', port: 0 });
    expect((await api('POST', '/tenants', { id: TENANT })).status).toBe(201);
    for (const signing of ['v1a', 'both'] as const) {
      const created = await api('POST', '/endpoints', { tenant_id: TENANT, url: `${sink.url}/${signing}`, signing });
      expect(created.status).toBe(201);
      expect(created.body.signing).toBe(signing);
      endpoints[signing] = created.body.id;
      if (signing === 'both') bothSecret = created.body.secret;
    }
    dispatcher = createDispatcherService(ctx);
    await dispatcher.start();
  });
  afterAll(async () => {
    await dispatcher?.stop();
    await app?.close();
    await sink?.close();
    await t?.close();
  });

  it('signs v1a with the tenant key its JWKS lists; @noble/curves verifies it, a changed byte fails', async () => {
    const doc = await jwks();
    expect(doc.status).toBe(200);
    expect(doc.headers.get('cache-control')).toMatch(/public, max-age=\d+/);
    expect(doc.body.keys).toHaveLength(1);
    const key = doc.body.keys[0]!;
    expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', use: 'sig', alg: 'EdDSA' });
    expect(key.d).toBeUndefined();
    expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);

    await publish(1);
    await waitUntil(() => requestsOf('v1a', 1).length === 1 && requestsOf('both', 1).length === 1);
    const req = requestsOf('v1a', 1)[0]!;
    expect(String(req.headers['webhook-signature'])).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const [sig] = v1aSignatures(req);
    expect(sig!.kid).toBe(key.kid);
    const publicKey = Buffer.from(key.x, 'base64url');
    expect(ed25519.verify(sig!.signature, signedContent(req), publicKey)).toBe(true);
    const changed = signedContent(req);
    changed[changed.length - 2]! ^= 1;
    expect(ed25519.verify(sig!.signature, changed, publicKey)).toBe(false);

    // `both`: the v1 signature verifies with the official library, the v1a one with noble.
    const both = requestsOf('both', 1)[0]!;
    expect(String(both.headers['webhook-signature'])).toMatch(/^v1,\S+ v1a,\S+$/);
    expect(() => new Webhook(bothSecret).verify(both.body, headerMap(both))).not.toThrow();
    expect(ed25519.verify(v1aSignatures(both)[0]!.signature, signedContent(both), publicKey)).toBe(true);
  });

  it('keeps the secret key sealed at rest, and answers an unknown tenant 404', async () => {
    const { rows } = await t.db.query<{ secret_key_enc: string; public_key: string }>(
      'SELECT secret_key_enc, public_key FROM tenant_signing_keys WHERE tenant_id = $1',
      [TENANT],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.secret_key_enc).toMatch(/^v1:/);
    expect(rows[0]!.secret_key_enc).not.toContain('whsk_');
    expect(rows[0]!.public_key).toMatch(/^whpk_/);
    expect((await jwks('m_nobody')).status).toBe(404);
    const listed = await api('GET', `/tenants/${TENANT}/signing-keys`);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toMatch(/whsk_|secret_key/);
    // v1a is Standard Webhooks' own: another scheme has no slot for it.
    const stripe = await api('POST', '/endpoints', { tenant_id: TENANT, url: `${sink.url}/stripe`, scheme: 'stripe', signing: 'v1a' });
    expect(stripe.status).toBe(400);
    expect(stripe.body.error).toBe('VALIDATION_FAILED');
    // A deleted tenant takes its keys with it; its JWKS is gone.
    expect((await api('POST', '/tenants', { id: 'm_gone' })).status).toBe(201);
    expect((await api('POST', '/tenants/m_gone/signing-keys/rotate', {})).status).toBe(201);
    expect((await jwks('m_gone')).body.keys).toHaveLength(1);
    const gone = await app.inject({
      method: 'DELETE',
      url: '/api/v1/tenants/m_gone',
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { confirm: true },
    });
    expect(gone.statusCode).toBe(200);
    expect((await jwks('m_gone')).status).toBe(404);
    expect((await t.db.query('SELECT 1 FROM tenant_signing_keys WHERE tenant_id = $1', ['m_gone'])).rows).toHaveLength(0);
  });

  it('carries two v1a signatures inside the rotation window, one per JWKS key', async () => {
    const rotated = await api('POST', `/tenants/${TENANT}/signing-keys/rotate`, { window: '1h' });
    expect(rotated.status).toBe(201);
    const doc = await jwks();
    expect(doc.body.keys.map((k) => k.kid)).toEqual([rotated.body.key.kid, expect.any(String)]);

    await publish(2);
    await waitUntil(() => requestsOf('v1a', 2).length === 1);
    const req = requestsOf('v1a', 2)[0]!;
    const sigs = v1aSignatures(req);
    expect(sigs).toHaveLength(2);
    expect(sigs[0]!.kid).toBe(rotated.body.key.kid);
    for (const { kid, signature } of sigs) {
      const jwk = doc.body.keys.find((k) => k.kid === kid)!;
      expect(ed25519.verify(signature, signedContent(req), Buffer.from(jwk.x, 'base64url'))).toBe(true);
    }
  });

  it('a receiver checks v1a with a whpk_ key and through the JWKS URL, fetching it again for an unknown kid', async () => {
    const doc = await jwks();
    const current = doc.body.keys[0]!;
    const whpk = `whpk_${Buffer.from(current.x, 'base64url').toString('base64')}`;
    const url = `${jwksBase}/.well-known/webhooks/${TENANT}/jwks.json`;
    const r = await receiverApp(
      t.db,
      receiverConfig({
        sources: {
          bykey: { scheme: 'standard', public_keys: [whpk] },
          byjwks: { scheme: 'standard', jwks: { url, allow_networks: ['127.0.0.0/8'], min_refresh_interval: '0s' } },
          guarded: { scheme: 'standard', jwks: { url } },
        },
      }),
    );
    try {
      const post = (source: string, req: SinkRequest, body = req.body) =>
        r.app.inject({ method: 'POST', url: `/in/${source}`, headers: { ...headerMap(req), 'content-type': 'application/json' }, payload: body });
      await publish(3);
      await waitUntil(() => requestsOf('v1a', 3).length === 1);
      const req = requestsOf('v1a', 3)[0]!;

      expect((await post('bykey', req)).json()).toEqual({ status: 'accepted' });
      const changed = Buffer.from(req.body);
      changed[changed.length - 2]! ^= 1;
      expect((await post('bykey', req, changed)).json().error).toBe('SIGNATURE_INVALID');
      expect((await post('byjwks', req)).json()).toEqual({ status: 'accepted' });

      // A loopback JWKS URL is refused unless allowed: never fetched, and the provider is told to retry.
      const refused = await post('guarded', req);
      expect(refused.statusCode).toBe(503);
      expect(refused.json().error).toBe('JWKS_UNAVAILABLE');

      // A new key, the old one gone at once: the request names a kid the receiver has not seen.
      const rotated = await api('POST', `/tenants/${TENANT}/signing-keys/rotate`, { window: 0 });
      await publish(4);
      await waitUntil(() => requestsOf('v1a', 4).length === 1);
      const fresh = requestsOf('v1a', 4)[0]!;
      expect(v1aSignatures(fresh).map((s) => s.kid)).toEqual([rotated.body.key.kid]);
      expect((await post('bykey', fresh)).statusCode).toBe(401);
      expect((await post('byjwks', fresh)).json()).toEqual({ status: 'accepted' });
      const forged = { ...fresh, headers: { ...fresh.headers, 'webhook-id': 'msg_forged', 'webhook-key-id': 'no-such-kid' } };
      expect((await post('byjwks', forged)).statusCode).toBe(401);
    } finally {
      await r.app.close();
    }
  });

  it('fetches the JWKS again for an unknown kid at most once per min_refresh_interval', async () => {
    let now = 1_000_000;
    const url = `${jwksBase}/.well-known/webhooks/${TENANT}/jwks.json`;
    const keys = new JwksKeys({ url, allow_networks: ['127.0.0.0/8'], max_age: 3_600_000, min_refresh_interval: 30_000, timeout: 5_000 }, 'probe', () => now);
    try {
      const first = await keys.keysFor([]);
      expect(first.map((k) => k.kid)).toEqual((await jwks()).body.keys.map((k) => k.kid));
      expect(keys.fetches).toBe(1);
      await Promise.all([keys.keysFor(['made-up']), keys.keysFor(['made-up-too'])]);
      expect(keys.fetches).toBe(1);
      now += 30_000;
      await Promise.all([keys.keysFor(['made-up']), keys.keysFor(['made-up-too'])]);
      expect(keys.fetches).toBe(2);
      await keys.keysFor([first[0]!.kid]);
      expect(keys.fetches).toBe(2);
      now += 3_600_000; // past max_age: fetched again whatever the request names
      await keys.keysFor([]);
      expect(keys.fetches).toBe(3);
    } finally {
      await keys.close();
    }
  });
});

describe('v1a: an independent Ed25519 implementation', () => {
  it("tekil verifies @noble/curves' signatures over id.timestamp.body, and noble verifies tekil's", async () => {
    const { createScheme } = await import('../src/signing/index.js');
    const { parsePublicKey, parseSecretKey, generateKeyPair, keyId } = await import('../src/signing/ed25519.js');
    const scheme = createScheme('standard');
    const seed = ed25519.utils.randomSecretKey();
    const pub = ed25519.getPublicKey(seed);
    const body = Buffer.from('{"type":"invoice.paid","data":{"id":"inv_1"}}');
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = ed25519.sign(Buffer.from(`msg_noble.${timestamp}.${body.toString()}`), seed);
    const headers = {
      'webhook-id': 'msg_noble',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': `v1a,${Buffer.from(signature).toString('base64')}`,
    };
    const publicKey = parsePublicKey(`whpk_${Buffer.from(pub).toString('base64')}`);
    expect(publicKey.kid).toBe(keyId(Buffer.from(pub)));
    expect(scheme.verify({ body, headers, secrets: [], publicKeys: [publicKey], toleranceSec: 300 }).headerEventId).toBe('msg_noble');
    const tampered = Buffer.from(body);
    tampered[3]! ^= 1;
    expect(() => scheme.verify({ body: tampered, headers, secrets: [], publicKeys: [publicKey], toleranceSec: 300 })).toThrow(/no signature/);

    // tekil's key pair, libsodium's 64-byte secret-key form accepted too: noble checks what tekil signs.
    const pair = generateKeyPair();
    const sodiumForm = `whsk_${Buffer.concat([Buffer.from(pair.secretKey.slice(5), 'base64'), Buffer.from(pair.publicKey.slice(5), 'base64')]).toString('base64')}`;
    for (const secretKey of [pair.secretKey, sodiumForm]) {
      const signed = scheme.sign({ body, secrets: [], signingKeys: [parseSecretKey(secretKey)], id: 'msg_tekil', timestamp });
      expect(signed['webhook-key-id']).toBe(pair.kid);
      const sig = Buffer.from(signed['webhook-signature']!.slice(4), 'base64');
      expect(ed25519.verify(sig, Buffer.from(`msg_tekil.${timestamp}.${body.toString()}`), Buffer.from(pair.publicKey.slice(5), 'base64'))).toBe(true);
    }
    // noble derives the same public key from tekil's secret key.
    expect(Buffer.from(ed25519.getPublicKey(Buffer.from(pair.secretKey.slice(5), 'base64'))).toString('base64')).toBe(pair.publicKey.slice(5));
  });

  it('checks the RFC 8032 test vector 1 (empty message) as noble does', async () => {
    const { publicKeyFromRaw, verifyParts } = await import('../src/signing/ed25519.js');
    const pub = Buffer.from('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex');
    const sig = Buffer.from(
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
      'hex',
    );
    expect(ed25519.verify(sig, new Uint8Array(0), pub)).toBe(true);
    expect(verifyParts(publicKeyFromRaw(pub), [], sig)).toBe(true);
    expect(verifyParts(publicKeyFromRaw(pub), ['x'], sig)).toBe(false);
  });
});
