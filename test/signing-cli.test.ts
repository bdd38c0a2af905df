import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ed25519 } from '@noble/curves/ed25519.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlArguments, formatHeaders } from '../src/cli/sign.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
// The command touches no database, so one store project is enough for the (slow) child process.
const secondStoreProject = process.env.TEKIL_TEST_STORE === 'postgres';

describe('tekil sign', () => {
  let dir: string;
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  // CRLF, multibyte text, a trailing space and no final newline: any re-encoding would break the signature.
  const body = Buffer.from('{"type":"invoice.paid",\r\n "data":{"id":"inv_1","note":"çağrı ✓ "}} ', 'utf8');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tekil-sign-'));
    await writeFile(join(dir, 'tekil.yaml'), 'sources:\n  demo:\n    scheme: standard\n    secrets: ["${TEKIL_SIGN_TEST_SECRET}"]\n');
    await writeFile(join(dir, 'event.json'), body);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(secondStoreProject)('--signing-key whsk_… prints v1a headers @noble/curves verifies', async () => {
    const seed = ed25519.utils.randomSecretKey();
    const { stdout } = await run(
      'npx',
      [
        'tsx',
        'src/cli/main.ts',
        'sign',
        '--scheme',
        'standard',
        '--signing-key',
        `whsk_${Buffer.from(seed).toString('base64')}`,
        '--id',
        'msg_cli',
        '--format',
        'json',
        '--body',
        join(dir, 'event.json'),
      ],
      { cwd: repoRoot, timeout: 60_000 },
    );
    const headers = JSON.parse(stdout) as Record<string, string>;
    expect(headers['webhook-signature']).toMatch(/^v1a,\S+$/);
    expect(headers['webhook-key-id']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const signed = Buffer.concat([Buffer.from(`msg_cli.${headers['webhook-timestamp']}.`), body]);
    const signature = Buffer.from(headers['webhook-signature']!.slice(4), 'base64');
    expect(ed25519.verify(signature, signed, ed25519.getPublicKey(seed))).toBe(true);
  });

  it.skipIf(secondStoreProject)('--source --format curl prints -H arguments the official library verifies', async () => {
    const { stdout } = await run(
      'npx',
      ['tsx', 'src/cli/main.ts', 'sign', '--config', join(dir, 'tekil.yaml'), '--source', 'demo', '--format', 'curl', '--body', join(dir, 'event.json')],
      { cwd: repoRoot, env: { ...process.env, TEKIL_SIGN_TEST_SECRET: secret }, timeout: 20_000 },
    );
    expect(stdout.trim().split('\n')).toHaveLength(1);
    // Split the way an unquoted $(…) is split by the shell: on whitespace, with no quote removal.
    const words = stdout.trim().split(/\s+/);
    const headers: Record<string, string> = {};
    for (let i = 0; i < words.length; i += 2) {
      expect(words[i]).toBe('-H');
      const arg = words[i + 1] as string;
      expect(arg).not.toMatch(/['"*?[]/);
      const colon = arg.indexOf(':');
      headers[arg.slice(0, colon).toLowerCase()] = arg.slice(colon + 1);
    }
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body.toString('utf8')));
  });

  it('formats headers as lines, JSON, or curl arguments quoted when splitting would break them', () => {
    const headers = { 'webhook-id': 'msg_1', 'webhook-signature': "v1,abc= v1,it's" };
    expect(formatHeaders(headers, 'headers')).toBe("webhook-id: msg_1\nwebhook-signature: v1,abc= v1,it's\n");
    expect(JSON.parse(formatHeaders(headers, 'json'))).toEqual(headers);
    expect(curlArguments(headers)).toBe("-H webhook-id:msg_1 -H 'webhook-signature: v1,abc= v1,it'\\''s'");
  });
});
