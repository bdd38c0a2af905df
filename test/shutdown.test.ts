import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { PAYMOS_SECRET, countRows, paymosBody, signPaymos } from './helpers/receiver.js';

/** Starts `tekil start` in its own process and resolves with its URL once the banner is printed. */
function startTekilProcess(env: NodeJS.ProcessEnv, configPath: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start', '--config', configPath, '--port', '0', '--role', 'receiver'], {
    env: { ...process.env, ...env, TEKIL_LOG_LEVEL: process.env.SHUTDOWN_TEST_LOG ?? 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    // The banner is on stderr (stdout carries the log lines).
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ child, url: m[1]! });
    });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`tekil exited early (${code}): ${err}`)));
    if (process.env.SHUTDOWN_TEST_LOG) child.stderr!.pipe(process.stderr);
    if (process.env.SHUTDOWN_TEST_LOG) child.stdout!.pipe(process.stderr);
  });
}

// A separate process on a server Postgres: not on PGlite.
describe.skipIf(!onPostgres)('graceful shutdown', () => {
  let t: TestDb;
  let dir: string;
  beforeAll(async () => {
    t = await createTestDb();
    dir = mkdtempSync(join(tmpdir(), 'tekil-shutdown-'));
    writeFileSync(join(dir, 'tekil.yaml'), `sources:\n  shop:\n    scheme: paymos\n    secrets: ["${PAYMOS_SECRET}"]\n`);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('on SIGTERM under load: answers in-flight requests, flushes, exits 0; every 2xx is in the table', async () => {
    const { child, url } = await startTekilProcess({ DATABASE_URL: t.url!, TEKIL_DATA_DIR: dir }, join(dir, 'tekil.yaml'));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const dispatcher = new Agent({ connections: 16, pipelining: 1 });
    const acked: string[] = [];
    let other = 0;
    let next = 0;
    let running = true;
    const sender = async () => {
      while (running) {
        const id = `evt_sd_${next++}`;
        const body = paymosBody(id);
        try {
          const res = await request(`${url}/in/shop`, { method: 'POST', body, headers: signPaymos(body), dispatcher });
          await res.body.dump();
          if (res.statusCode === 200) acked.push(id);
          else other++;
          if (acked.length === 300) child.kill('SIGTERM');
        } catch {
          running = false; // the server has closed its port
        }
      }
    };
    const senders = Promise.all(Array.from({ length: 16 }, sender));
    const code = await exited;
    running = false;
    await senders;
    await dispatcher.close();
    expect(code).toBe(0);
    expect(acked.length).toBeGreaterThanOrEqual(300);
    expect(await countRows(t.db, 'event_id = ANY($1)', [acked])).toBe(acked.length);
    // Only refused requests (503 while closing) may be missing; nothing beyond what was sent.
    expect(await countRows(t.db)).toBeLessThanOrEqual(acked.length + other + 16);
  });
});
