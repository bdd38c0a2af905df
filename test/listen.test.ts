import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeHeaderValue, headerValue } from '../src/http/header-value.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { receiverConfig, signPaymos } from './helpers/receiver.js';
import { startSink, waitUntil, type Sink } from './helpers/sink.js';
import { repoRoot } from './helpers/tekil-process.js';

const TOKEN = 'listen-test-token';
const SOURCE = 'shop';

/** `tekil listen` as its own process; resolves once it says it is listening. */
async function spawnListen(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'listen', ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitUntil(() => out.includes('listening to') || child.exitCode !== null, 60_000, 'tekil listen to start');
  if (child.exitCode !== null) throw new Error(`tekil listen exited: ${out}`);
  return { child, output: () => out, exited };
}

describe('tekil listen: forwards every delivery to a local URL, across a SIGKILL', () => {
  let t: TestDb;
  let tekil: RunningTekil;
  let sink: Sink;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const sent = new Map<string, Buffer>();
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    t = await createTestDb();
    dir = mkdtempSync(join(tmpdir(), 'tekil-listen-'));
    env = { ...process.env, TEKIL_ADMIN_TOKEN: TOKEN, TEKIL_DATA_DIR: dir };
    tekil = await startTekil({
      config: receiverConfig(),
      roles: new Set(['receiver', 'api'] as const),
      env,
      db: t.db,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
    });
    // The second request is refused with a 503; the first copy of evt_b2 is never answered, so the
    // listener is killed with that delivery in flight.
    let held = false;
    sink = await startSink((n, req) => {
      if (n === 2) return { status: 503 };
      if (req.headers['x-tekil-event-id'] === 'evt_b2' && !held) {
        held = true;
        return { after: new Promise(() => {}) };
      }
      return { status: 200 };
    });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await tekil?.close();
    await sink?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function send(eventId: string): Promise<void> {
    // Bytes a re-encoding would change: Turkish letters, uneven spacing, a trailing newline.
    const body = Buffer.from(
      `{ "event_id":"${eventId}",  "event_type":"invoice.paid", "version":1, "occurred_at":"2026-11-29T10:00:00Z", "data":{"id":"inv_${eventId}","note":"ödeme alındı – ğüşİ"} }\n`,
    );
    const res = await request(`${tekil.url}/in/${SOURCE}`, { method: 'POST', headers: signPaymos(body), body });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    sent.set(eventId, body);
  }

  const forwardedIds = () => new Set(sink.requests.map((r) => String(r.headers['x-tekil-event-id'])));

  it('resumes where it stopped, skips none, forwards bytes and headers as received', async () => {
    const state = join(dir, 'listen-shop.json');
    const args = ['--remote', tekil.url, '--source', SOURCE, '--to', sink.url, '--state', state, '--interval', '100ms'];
    const first = await spawnListen(args, env);
    children.push(first.child);
    for (let i = 1; i <= 4; i++) await send(`evt_a${i}`);
    await waitUntil(() => forwardedIds().size >= 4, 30_000, 'the first batch forwarded');
    for (let i = 1; i <= 6; i++) await send(`evt_b${i}`);
    // Killed while the second batch is being forwarded: evt_b1 is through, evt_b2 is waiting for its answer.
    await waitUntil(() => forwardedIds().has('evt_b2'), 30_000, 'the second batch under way');
    first.child.kill('SIGKILL');
    await first.exited;
    expect([...forwardedIds()].sort()).toEqual(['evt_a1', 'evt_a2', 'evt_a3', 'evt_a4', 'evt_b1', 'evt_b2']);
    for (let i = 1; i <= 3; i++) await send(`evt_c${i}`);

    const second = await spawnListen(args, env);
    children.push(second.child);
    await waitUntil(() => forwardedIds().size >= sent.size, 60_000, `all ${sent.size} forwarded (got ${forwardedIds().size})`);
    await send('evt_d1');
    await waitUntil(() => forwardedIds().has('evt_d1'), 30_000, 'a delivery sent after the restart');

    expect([...forwardedIds()].sort()).toEqual([...sent.keys()].sort());
    // The refused request was tried again: the same delivery went out twice, and its second copy was accepted.
    expect(sink.requests[1]!.headers['x-tekil-event-id']).toBe(sink.requests[2]!.headers['x-tekil-event-id']);
    for (const r of sink.requests) {
      const id = String(r.headers['x-tekil-event-id']);
      expect(r.body.equals(sent.get(id)!), id).toBe(true);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-tekil-source']).toBe(SOURCE);
    }
    // A delivery listen reports as forwarded is in the cursor on disk.
    await waitUntil(() => second.output().includes('evt_d1: 200'), 30_000, 'evt_d1 accepted');
    second.child.kill('SIGTERM');
    await second.exited;
    const saved = JSON.parse(readFileSync(state, 'utf8')) as { source: string; forwarded: Array<[string, string]> };
    expect(saved.source).toBe(SOURCE);
    expect(saved.forwarded.map(([id]) => id)).toContain('evt_d1');
  }, 180_000);

  it('--since replays a window, whatever the cursor says', async () => {
    const before = sink.requests.length;
    const replay = await spawnListen(
      ['--remote', tekil.url, '--source', SOURCE, '--to', sink.url, '--state', join(dir, 'replay.json'), '--since', '1h', '--interval', '100ms'],
      env,
    );
    children.push(replay.child);
    await waitUntil(
      () => new Set(sink.requests.slice(before).map((r) => String(r.headers['x-tekil-event-id']))).size >= sent.size,
      60_000,
      'the window replayed',
    );
    replay.child.kill('SIGTERM');
    await replay.exited;
  }, 120_000);

  it("a wrong token ends it with the API's coded error, and writes no cursor", async () => {
    const state = join(dir, 'refused.json');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'listen', '--remote', tekil.url, '--source', SOURCE, '--to', sink.url, '--state', state],
      {
        cwd: repoRoot,
        env: { ...env, TEKIL_ADMIN_TOKEN: 'not-the-token' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toMatch(/^tekil: UNAUTHORIZED: wrong admin token/);
    expect(() => readFileSync(state)).toThrow();
  }, 60_000);

  it('a delivery arriving while it waits is forwarded at once, woken by the live event stream, not at the next poll', async () => {
    const listener = await spawnListen(
      ['--remote', tekil.url, '--source', SOURCE, '--to', sink.url, '--state', join(dir, 'woken.json'), '--interval', '10m'],
      env,
    );
    children.push(listener.child);
    await waitUntil(() => listener.output().includes('following the live event stream'), 30_000, 'the event stream open');
    const before = sink.requests.length;
    await send('evt_woken');
    await waitUntil(
      () => sink.requests.slice(before).some((r) => r.headers['x-tekil-event-id'] === 'evt_woken'),
      20_000,
      'evt_woken forwarded before the 10-minute poll',
    );
    listener.child.kill('SIGTERM');
    await listener.exited;
  }, 90_000);
});

describe("tekil listen: what a remote answers cannot stop it or reach the local app's credentials", () => {
  let remote: Server;
  let remoteUrl = '';
  let sink: Sink;
  let dir: string;
  const children: ChildProcess[] = [];
  /** Until listen is listening, the remote holds one delivery whose received_at is not a time. */
  let phase: 'starting' | 'running' = 'starting';
  const now = new Date().toISOString();
  const listed = () =>
    phase === 'starting'
      ? [{ event_id: 'evt_bad_time', received_at: 'not a time' }]
      : [
          { event_id: 'evt_bad_header', received_at: now },
          { event_id: 'evt_ı_1', received_at: now },
          { event_id: 'evt_bad_time', received_at: 'not a time' },
        ];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tekil-listen-remote-'));
    sink = await startSink();
    remote = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://remote');
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/api/v1/inbox') {
        // Every page names a next one, for ever.
        const cursor = url.searchParams.get('cursor');
        const n = cursor === null ? 0 : Number(cursor.slice(1));
        return json(200, { items: n === 0 ? listed() : [], next_cursor: `p${n + 1}` });
      }
      const detail = /^\/api\/v1\/inbox\/shop\/(.+)$/.exec(url.pathname);
      if (detail) {
        const id = decodeURIComponent(detail[1]!);
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          'x-provider': 'kept',
          authorization: 'Bearer remote-secret',
          cookie: 'sid=remote',
        };
        if (id === 'evt_bad_header') Object.assign(headers, { 'x-broken': 'a\r\nb', 'bad name': 'x' });
        return json(200, { headers, content_type: 'application/json', body: JSON.stringify({ id }), body_encoding: 'utf8', body_trimmed_at: null });
      }
      json(404, { error: 'NOT_FOUND', message: 'no route' });
    });
    await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
    remoteUrl = `http://127.0.0.1:${(remote.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await new Promise((resolve) => remote?.close(resolve));
    await sink?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forwards an id outside Latin-1 encoded as forwarding does, drops refused headers and credentials, survives a bad received_at and endless pages', async () => {
    const env = { ...process.env, TEKIL_ADMIN_TOKEN: 'remote-token' };
    const listener = await spawnListen(
      ['--remote', remoteUrl, '--source', 'shop', '--to', sink.url, '--state', join(dir, 'remote.json'), '--interval', '200ms'],
      env,
    );
    children.push(listener.child);
    phase = 'running';
    await waitUntil(() => sink.requests.length >= 2 || listener.child.exitCode !== null, 60_000, `both forwarded: ${listener.output()}`);
    expect(listener.child.exitCode, listener.output()).toBeNull();
    const byId = new Map(sink.requests.map((r) => [decodeHeaderValue(String(r.headers['x-tekil-event-id'])), r]));
    expect([...byId.keys()].sort()).toEqual(['evt_bad_header', 'evt_ı_1']);
    expect(String(byId.get('evt_ı_1')!.headers['x-tekil-event-id'])).toBe(headerValue('evt_ı_1'));
    for (const r of sink.requests) {
      expect(r.headers['x-provider']).toBe('kept');
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers.cookie).toBeUndefined();
      expect(r.headers['x-broken']).toBeUndefined();
    }
    expect(listener.output()).toContain('evt_bad_header: left out headers the HTTP client refuses: "x-broken", "bad name"');
    // Later polls still end (the pages are bounded) and send nothing twice.
    const polls = () => listener.output().split('the remote lists more than').length;
    const seen = polls();
    await waitUntil(() => polls() >= seen + 2, 60_000, 'two more polls');
    expect(sink.requests).toHaveLength(2);
    expect(listener.child.exitCode).toBeNull();
    listener.child.kill('SIGTERM');
    await listener.exited;
  }, 180_000);
});
