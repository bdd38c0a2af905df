import type { RunningTekil } from '../runtime.js';

/** A few lines a newcomer needs right after start: where it listens, the store, the admin token. */
export function printStartBanner(running: RunningTekil, configPath: string | undefined): void {
  const { ctx, url, adminToken } = running;
  const out: string[] = [];
  out.push(`tekil listening on ${url} (config: ${configPath ?? 'none'})`);
  if (ctx.db.kind === 'pglite') {
    out.push(`store: embedded PGlite in ${running.dataDir} (single process, no fsync: for development; set DATABASE_URL for production)`);
  } else {
    out.push('store: PostgreSQL (DATABASE_URL)');
  }
  if (adminToken?.generated) {
    out.push(`admin token (shown once, saved to ${adminToken.file}): ${adminToken.token}`);
  }
  const sources = Object.keys(ctx.config.sources);
  out.push(sources.length ? `sources: ${sources.map((s) => `${url}/in/${s}`).join(', ')}` : 'no sources configured: add some under "sources:" in tekil.yaml');
  process.stdout.write(`${out.join('\n')}\n`);
}
