import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runListingModules } from './helpers/loaded-modules.js';
import { repoRoot } from './helpers/tekil-process.js';

/** Packages an application that only publishes must not load (nor, through them, their dependencies). */
const heavy = ['fastify', 'exceljs', 'pdfkit', '@electric-sql/pglite', 'prom-client', 'pino', 'undici', 'zod', 'yaml', '@opentelemetry/sdk-trace-node'];

describe('tekil/publish: the entry point for applications that only publish', () => {
  it('is in the package exports, next to the full API', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, { default: string; types: string }> };
    expect(pkg.exports['./publish']).toEqual({ types: './dist/outbox/publish-entry.d.ts', default: './dist/outbox/publish-entry.js' });
  });

  it('loads publish() and nothing of the server, the panel, the exports or the embedded store', async () => {
    const script = [
      "const entry = await import('./src/outbox/publish-entry.ts');",
      'process.stdout.write(JSON.stringify({ publish: typeof entry.publish, channel: entry.OUTBOX_CHANNEL, error: typeof entry.TekilError }));',
    ].join('\n');
    const run = await runListingModules(['--input-type=module', '-e', script]);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ publish: 'function', channel: expect.any(String), error: 'function' });
    expect(run.urls.some((url) => url.endsWith('/src/outbox/publish.ts'))).toBe(true);
    for (const name of heavy) expect(run.loadedPackage(name), name).toBe(false);
  }, 60_000);

  it('the full entry point, by contrast, does load them (the check above can see a package)', async () => {
    const run = await runListingModules(['--input-type=module', '-e', "await import('./src/index.ts');"]);
    expect(run.stderr).toBe('');
    expect(run.loadedPackage('fastify')).toBe(true);
    // The exports' writers stay unloaded until an export is asked for, even here.
    expect(run.loadedPackage('exceljs')).toBe(false);
    expect(run.loadedPackage('pdfkit')).toBe(false);
  }, 60_000);
});
