import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { asPostgresUser } from './private-postgres.js';
import { freePort } from './free-port.js';
import { waitUntil } from './wait.js';

/**
 * A real PgBouncer in front of the test server, started as a child process with its own ini and
 * userlist in a temp dir. It refuses to run as root, so under root it runs as the `postgres` user
 * (which Debian's postgresql and pgbouncer packages create).
 */
export interface PgBouncer {
  /** A connection string to `database` through the bouncer. */
  urlFor(database: string): string;
  /** The local ports of the bouncer's connections to the server (its admin console's SHOW SERVERS). */
  serverPorts(): Promise<number[]>;
  /** What the bouncer logged, for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];

export function findPgBouncer(): string | undefined {
  try {
    const found = execFileSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).trim();
    if (found) return found;
  } catch {
    // not on PATH: /usr/sbin is often missing from a non-root PATH
  }
  return CANDIDATES.find((p) => existsSync(p));
}

export interface PgBouncerOptions {
  /** The server it pools for (host:port of TEKIL_TEST_DATABASE_URL). */
  upstream: URL;
  /** Server connections per database and user: small, so clients share them as in production. */
  poolSize?: number;
}

/** Starts PgBouncer in transaction mode and resolves once it answers a query. */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const binary = findPgBouncer();
  if (!binary) throw new Error('pgbouncer is not installed (apt-get install pgbouncer)');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tekil-pgbouncer-'));
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(options.upstream.username || 'postgres');
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${options.upstream.hostname} port=${options.upstream.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 4}`,
      'max_client_conn = 200',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const { command, args } = asPostgresUser(binary, [join(dir, 'pgbouncer.ini')]);
  const child: ChildProcess = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.on('exit', () => ((exited = true), resolve())));

  const urlFor = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await exit;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(
      async () => {
        if (exited) throw new Error(`pgbouncer exited: ${output}`);
        const client = new pg.Client({ connectionString: urlFor('postgres') });
        client.on('error', () => {});
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => {});
        }
      },
      15_000,
      'pgbouncer to accept connections',
    );
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    urlFor,
    log: () => output,
    async serverPorts() {
      // The admin console speaks only the simple query protocol: a query without parameters uses it.
      const admin = new pg.Client({ connectionString: urlFor('pgbouncer') });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ local_port: string | number }>('SHOW SERVERS');
        return rows.map((r) => Number(r.local_port));
      } finally {
        await admin.end();
      }
    },
    stop,
  };
}
