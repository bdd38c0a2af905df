import { describe, expect, it } from 'vitest';
import { DestinationGuard } from '../src/http/destination-guard.js';
import { Sender } from '../src/outbox/sender.js';
import { startSink } from './helpers/sink.js';

describe('destination guard', () => {
  it('checks the address a connection really uses: names resolving to loopback are refused at connect time', async () => {
    const sink = await startSink();
    const sender = new Sender({ operator: new DestinationGuard(), tenants: new DestinationGuard() });
    try {
      const port = new URL(sink.url).port;
      for (const url of [`http://localhost:${port}/hook`, `http://127.0.0.1:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`]) {
        const outcome = await sender.send({ url, body: Buffer.from('{}'), headers: {}, timeoutMs: 2_000 });
        expect(outcome.succeeded, url).toBe(false);
        expect(outcome.error, url).toMatch(/private, loopback or link-local/);
      }
      expect(sink.requests).toHaveLength(0);
    } finally {
      await sender.close();
      await sink.close();
    }
  });

  it('refuses such destinations when an endpoint is created', async () => {
    const guard = new DestinationGuard();
    await expect(guard.checkUrl('http://169.254.169.254/latest/meta-data')).rejects.toMatchObject({ code: 'FORBIDDEN_DESTINATION' });
    await expect(guard.checkUrl('http://localhost:9/')).rejects.toMatchObject({ code: 'FORBIDDEN_DESTINATION' });
    await expect(guard.checkUrl('http://127.0.0.1:9/')).rejects.toMatchObject({
      code: 'FORBIDDEN_DESTINATION',
      hint: 'to allow it, add to the configuration: sending: { allow_networks: ["127.0.0.0/8"] }',
    });
    await expect(guard.checkUrl('ftp://example.com/')).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(guard.checkUrl('https://93.184.216.34/hook')).resolves.toBeInstanceOf(URL);
  });
});

describe('endpoint secrets at rest', () => {
  it('encrypts with a key generated on first use into <data dir>/secret-key (0600); another key cannot decrypt', async () => {
    const { mkdtempSync, statSync, existsSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { resolveSecretBox, createSecretBox, generateEndpointSecret } = await import('../src/outbox/secrets.js');
    const dir = mkdtempSync(join(tmpdir(), 'tekil-secret-key-'));
    const box = resolveSecretBox({ from: 'file', dataDir: dir });
    expect(existsSync(join(dir, 'secret-key'))).toBe(false);
    const secret = generateEndpointSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const sealed = box.encrypt(secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(statSync(join(dir, 'secret-key')).mode & 0o777).toBe(0o600);
    expect(box.decrypt(sealed)).toBe(secret);
    expect(() => createSecretBox('some other key').decrypt(sealed)).toThrow(/different TEKIL_SECRET_KEY/);
    expect(resolveSecretBox({ from: 'env', key: 'k1' }).decrypt(resolveSecretBox({ from: 'env', key: 'k1' }).encrypt('x'))).toBe('x');
  });
});
