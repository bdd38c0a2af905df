import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstWebhookLines } from '../src/cli/banner.js';
import { loadConfigFile } from '../src/config/load.js';
import type { TekilConfig } from '../src/config/schema.js';
import { startTekil, type RunningTekil } from '../src/runtime.js';
import { schemeNames } from '../src/signing/index.js';
import { createTestDb, type TestDb } from './helpers/db.js';
import { repoRoot } from './helpers/tekil-process.js';

const tsx = pathToFileURL(join(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href;
const tekil = `${process.execPath} --import ${tsx} ${join(repoRoot, 'src/cli/main.ts')}`;

/** One source per scheme, as a newcomer writes them (docs/tr/README.md's paytr and iyzico blocks included). */
const CONFIG = `
sources:
  paytr:
    scheme: paytr
    paytr: { merchant_key: "paytr-key-demo", merchant_salt: "paytr-salt-demo" }
  iyzico:
    scheme: iyzico
    iyzico: { secret_key: "iyzico-secret-demo" }
  standard:
    scheme: standard
    secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]
  stripe:
    scheme: stripe
    secrets: ["whsec_stripe_demo"]
  github:
    scheme: github
    secrets: ["github-demo-secret"]
  shopify:
    scheme: shopify
    secrets: ["shopify-demo-secret"]
  paymos:
    scheme: paymos
    secrets: ["whsec_paymos_demo_secret"]
  papara:
    scheme: papara
    secrets: ["papara-demo-merchant-secret"]
  craftgate:
    scheme: craftgate
    secrets: ["craftgate-demo-webhook-key"]
  sipay:
    scheme: sipay
    secrets: ["b46a67571aa1e7ef5641dc3fa6f1712a"]
  hmac:
    scheme: hmac
    secrets: ["hmac-demo-secret"]
    hmac: { signature_header: X-Signature, algorithm: sha256, encoding: hex, id_header: X-Event-Id }
  hmac-form:
    scheme: hmac
    secrets: ["hmac-form-secret"]
    event_id: form:id
    hmac: { signature: "form:sig", algorithm: sha256, encoding: base64, signed_payload: "{form:id}{form:type}" }
`;

function bash(cwd: string, script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // No startup files (BASH_ENV): the lines run as pasted into a plain shell.
    execFile('bash', ['-eo', 'pipefail', '-c', script], { cwd, timeout: 180_000, env: { ...process.env, BASH_ENV: '' } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * The start banner's first command, for every scheme: the printed lines, run in a shell as a newcomer
 * pastes them, reach a running tekil and are answered 2xx; the curl run again is a duplicate.
 */
describe("tekil start's first command works for every scheme", () => {
  let t: TestDb;
  let running: RunningTekil;
  let config: TekilConfig;
  let configPath: string;

  beforeAll(async () => {
    t = await createTestDb();
    const dir = mkdtempSync(join(tmpdir(), 'tekil-banner-'));
    configPath = join(dir, 'tekil.yaml');
    writeFileSync(configPath, CONFIG);
    config = await loadConfigFile(configPath, {});
    running = await startTekil({
      config,
      roles: new Set(['receiver', 'api'] as const),
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      db: t.db,
      env: { TEKIL_ADMIN_TOKEN: 'banner-test-admin-token', TEKIL_DATA_DIR: dir },
    });
  }, 120_000);
  afterAll(async () => {
    await running?.close();
    await t?.close();
  });

  it('covers every scheme', () => {
    const schemes = new Set(Object.values(config.sources).map((s) => s.scheme));
    expect([...schemes].sort()).toEqual([...schemeNames].sort());
  });

  it('the printed lines are answered 2xx, and the second curl is a duplicate of the first', async () => {
    const names = Object.keys(config.sources);
    const results: Record<string, { first: string; second: string }> = {};
    // A few at a time: every line starts the CLI as a process.
    for (let i = 0; i < names.length; i += 3) {
      await Promise.all(
        names.slice(i, i + 3).map(async (name) => {
          const lines = firstWebhookLines(running.url, name, config.sources[name]!, configPath, tekil);
          expect(lines[0]).toMatch(/^send a first signed webhook/);
          const commands = lines.slice(1).map((l) => l.trim());
          // The body names what the scheme reads: JSON for JSON schemes, a form for PayTR.
          if (name === 'paytr') expect(commands.join('\n')).toContain("content-type: application/x-www-form-urlencoded'");
          if (name === 'paytr' || name === 'iyzico') expect(commands.join('\n')).not.toContain('--id');
          const cwd = mkdtempSync(join(tmpdir(), `tekil-banner-${name}-`));
          const first = await bash(cwd, commands.join('\n'));
          expect(first.stderr, `${name}: ${commands.join('\n')}`).toBe('');
          expect(first.code, name).toBe(0);
          const second = await bash(cwd, commands[commands.length - 1]!);
          expect(second.code, name).toBe(0);
          results[name] = { first: first.stdout, second: second.stdout };
        }),
      );
    }
    for (const name of names) {
      const { first, second } = results[name]!;
      if (name === 'paytr') {
        expect([first, second], name).toEqual(['OK', 'OK']);
      } else {
        expect(JSON.parse(first), `${name}: ${first}`).toMatchObject({ status: 'accepted' });
        expect(JSON.parse(second), `${name}: ${second}`).toMatchObject({ status: 'duplicate' });
      }
    }
    // One row per source: the copy was recognised as the same delivery.
    const { rows } = await t.db.query<{ source: string; n: number }>('SELECT source, count(*)::int AS n FROM inbox_deliveries GROUP BY source ORDER BY source');
    expect(Object.fromEntries(rows.map((r) => [r.source, r.n]))).toEqual(Object.fromEntries(names.map((n) => [n, 1])));
  }, 600_000);
});
