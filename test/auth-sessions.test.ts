import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { authenticate } from '../src/auth/authenticate.js';
import { callerForToken, createOperator, revoke } from '../src/auth/operators.js';
import { openSession, SESSION_COOKIE } from '../src/auth/sessions.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { testContext, workerTestConfig } from './helpers/inbox.js';

const ADMIN = 'auth-sessions-admin-token';
const ROTATED = 'auth-sessions-rotated-admin-token';

interface Answer {
  status: number;
  json: Record<string, unknown>;
  setCookie: string | undefined;
}

async function call(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  opts: { cookie?: string; csrf?: string; bearer?: string; json?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.csrf) headers['x-tekil-csrf'] = opts.csrf;
  if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await request(`${base}${path}`, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
  const text = await res.body.text();
  const setCookie = res.headers['set-cookie'];
  return {
    status: res.statusCode,
    json: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
    setCookie: setCookie === undefined ? undefined : String(setCookie),
  };
}

/** Signs in; the cookie and CSRF token of the session, or undefined when the sign-in was refused. */
async function signIn(base: string, token: string): Promise<{ cookie: string; csrf: string } | undefined> {
  const res = await call(base, 'POST', '/api/v1/session', { json: { token } });
  if (res.status !== 201) return undefined;
  return { cookie: res.setCookie!.split(';')[0]!, csrf: res.json.csrf_token as string };
}

/** A change any operator may make, and that always succeeds for one: a dry run would only read. */
const change = (base: string, session: { cookie: string; csrf: string }) =>
  call(base, 'POST', '/api/v1/inbox/replay', { cookie: session.cookie, csrf: session.csrf, json: { status: 'dead' } });

/**
 * Every session derived from a token ends when the token does: an operator's when it is revoked (sign-ins
 * racing the revoke included), the admin token's when TEKIL_ADMIN_TOKEN changes.
 */
describe('sessions end with the token they came from', () => {
  let t: TestDb;
  const apps: FastifyInstance[] = [];
  const config = workerTestConfig({ store: { data_dir: mkdtempSync(join(tmpdir(), 'tekil-auth-sessions-')) } });

  const start = async (adminToken: string): Promise<{ app: FastifyInstance; base: string }> => {
    const app = await buildApp({ ctx: testContext(t.db, config), roles: new Set(['api']), adminToken });
    apps.push(app);
    return { app, base: await app.listen({ host: '127.0.0.1', port: 0 }) };
  };

  beforeAll(async () => {
    t = await createTestDb();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a sign-in that checked the token just before the revoke gets a session that cannot be used', async () => {
    const { token } = await createOperator(t.db, 'racer', 'operator');
    // The interleaving a racing sign-in can have: the token is checked while live, the revoke
    // commits, and only then the session is written.
    const caller = await callerForToken(t.db, ADMIN, token);
    expect(caller?.operatorId).toBeDefined();
    await revoke(t.db, 'racer');
    const { id, session } = await openSession(t.db, caller!, ADMIN);
    const presented = { cookie: `${SESSION_COOKIE}=${id}`, csrf: session.csrfToken };
    await expect(authenticate(t.db, ADMIN, 'view', presented)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(authenticate(t.db, ADMIN, 'operate', presented)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('no session of many sign-ins racing a revoke can make a change once the revoke has answered', async () => {
    const { base } = await start(ADMIN);
    const made = await call(base, 'POST', '/api/v1/operators', { bearer: ADMIN, json: { name: 'crowd', role: 'operator' } });
    expect(made.status).toBe(201);
    const token = made.json.token as string;

    const signIns = Array.from({ length: 40 }, () => signIn(base, token));
    const revoked = await call(base, 'POST', '/api/v1/operators/crowd/revoke', { bearer: ADMIN });
    expect(revoked.status).toBe(200);
    const sessions = (await Promise.all(signIns)).filter((s) => s !== undefined);

    for (const session of sessions) {
      expect((await change(base, session)).status).toBe(401);
      expect((await call(base, 'GET', '/api/v1/inbox', { cookie: session.cookie })).status).toBe(401);
    }
    expect(await signIn(base, token)).toBeUndefined();
  });

  it('changing the admin token ends every session made with the old one; the new one signs in', async () => {
    const before = await start(ADMIN);
    const old = await signIn(before.base, ADMIN);
    expect(old).toBeDefined();
    expect((await change(before.base, old!)).status).toBe(200);
    await Promise.all(apps.splice(0).map((a) => a.close()));

    // The same store, restarted with another TEKIL_ADMIN_TOKEN.
    const after = await start(ROTATED);
    expect((await call(after.base, 'GET', '/api/v1/inbox', { cookie: old!.cookie })).status).toBe(401);
    expect((await change(after.base, old!)).status).toBe(401);
    // Nor can the old session mint an operator token that would outlive it.
    const minted = await call(after.base, 'POST', '/api/v1/operators', { cookie: old!.cookie, csrf: old!.csrf, json: { name: 'heir', role: 'operator' } });
    expect(minted.status).toBe(401);
    expect((await t.db.query(`SELECT 1 FROM operators WHERE name = 'heir'`)).rows).toHaveLength(0);

    expect(await signIn(after.base, ADMIN)).toBeUndefined();
    const fresh = await signIn(after.base, ROTATED);
    expect(fresh).toBeDefined();
    expect((await change(after.base, fresh!)).status).toBe(200);
  });
});
