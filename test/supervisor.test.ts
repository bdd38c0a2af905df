import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { PAYMOS_SECRET, paymosBody, signPaymos } from './helpers/receiver.js';
import { repoRoot, spawnTekil } from './helpers/tekil-process.js';
import { waitUntil } from './helpers/wait.js';

const config = `sources:\n  shop:\n    scheme: paymos\n    secrets: ["${PAYMOS_SECRET}"]\n`;

/** The children's pids from the supervisor's "process started" log lines, in order. */
function startedPids(output: string): number[] {
  return [...output.matchAll(/"childPid":(\d+)/g)].map((m) => Number(m[1]));
}

function countAccepted(metrics: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith('tekil_inbox_deliveries_total{') && l.includes('outcome="accepted"'));
  return line ? Number(line.split(' ').pop()) : 0;
}

// The store-independent check runs once (in the PGlite project); the rest needs a server database.
describe.skipIf(onPostgres)('tekil start --processes on the embedded store', () => {
  it('refuses more than one process with a coded error and a hint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tekil-sup-'));
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start', '--processes', '3', '-p', '0'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: '', TEKIL_DATA_DIR: dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(err).toMatch(/^tekil: PROCESSES_NEED_POSTGRES: .*\(hint: set DATABASE_URL/m);
  }, 30_000);
});

describe.skipIf(!onPostgres)('tekil start --processes 2 on Postgres', () => {
  let t: TestDb;
  let dir: string;
  beforeAll(async () => {
    t = await createTestDb();
    dir = mkdtempSync(join(tmpdir(), 'tekil-sup-'));
    writeFileSync(join(dir, 'tekil.yaml'), config);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shares one port, sums /metrics over both, restarts SIGKILLed processes on the same port and stops both on SIGTERM', async () => {
    const tekil = await spawnTekil(['-c', join(dir, 'tekil.yaml'), '-p', '0', '--role', 'receiver', '--processes', '2'], {
      DATABASE_URL: t.url!,
      TEKIL_DATA_DIR: dir,
      TEKIL_LOG_LEVEL: 'info',
    });
    try {
      const [first, second] = startedPids(tekil.output());
      expect(tekil.output()).toMatch(/2 processes, roles: receiver/);
      const agent = new Agent({ connections: 8 });
      // Several connections: the supervisor hands them to both processes.
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const body = paymosBody(`evt_sup_${i}`);
          const res = await request(`${tekil.url}/in/shop`, { method: 'POST', body, headers: signPaymos(body), dispatcher: agent });
          expect(res.statusCode).toBe(200);
          await res.body.dump();
        }),
      );
      // Whichever process answers the scrape, it reports the sum over both.
      for (let scrape = 0; scrape < 3; scrape++) {
        const res = await request(`${tekil.url}/metrics`, { dispatcher: agent });
        expect(countAccepted(await res.body.text())).toBe(20);
      }

      // One while the other serves (the replacement joins the same socket), then the other.
      process.kill(first!, 'SIGKILL');
      await waitUntil(() => startedPids(tekil.output()).length === 3, 30_000, 'the first process started again');
      expect(tekil.output()).toMatch(/"signal":"SIGKILL".*"process exited; restarting it"/);
      process.kill(second!, 'SIGKILL');
      await waitUntil(() => startedPids(tekil.output()).length === 4, 30_000, 'the second process started again');
      await waitUntil(
        async () => {
          const res = await request(`${tekil.url}/healthz`, { dispatcher: agent }).catch(() => undefined);
          await res?.body.dump();
          return res?.statusCode === 200;
        },
        30_000,
        'the same port answers again',
      );
      // Both replacements are up and none of them has exited (a port clash would crash-loop them).
      await waitUntil(() => (tekil.output().match(/Server listening at http:\/\/127\.0\.0\.1/g) ?? []).length >= 4, 30_000, 'both replacements listening');
      expect(tekil.output()).not.toMatch(/EADDRINUSE|"code":1,/);
      const replacements = startedPids(tekil.output()).slice(2);
      await waitUntil(
        async () => {
          const res = await request(`${tekil.url}/healthz`, { dispatcher: agent }).catch(() => undefined);
          await res?.body.dump();
          return res?.statusCode === 200;
        },
        30_000,
        'the same port answers again',
      );
      await agent.close();

      expect(await tekil.stop('SIGTERM')).toBe(0);
      for (const pid of replacements) expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      await tekil.stop('SIGKILL');
    }
  }, 60_000);
});
