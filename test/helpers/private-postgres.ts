import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throw-away Postgres cluster of this test's own, for the tests that stop and restart the server
 * (the shared server must never be restarted under other tests). Runs as the `postgres` OS user when
 * the tests run as root, since initdb refuses root.
 */
export interface PrivatePostgres {
  url: string;
  stop(): void;
  /** `pg_ctl stop -m immediate`: the server dies without a checkpoint, as in a crash (recovery on start). */
  crash(): void;
  start(): void;
  /** Stops the server (fast: open connections are cut) and deletes its files. */
  destroy(): void;
}

function findBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

/** Why a private cluster cannot be made here, or undefined when it can. */
export function privatePostgresUnavailable(): string | undefined {
  if (!findBinDir()) return 'initdb not found under /usr/lib/postgresql/*/bin';
  if (process.getuid?.() === 0) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
    } catch {
      return 'running as root and there is no postgres user to run initdb as';
    }
  }
  return undefined;
}

/**
 * The command line that runs `binary` as the `postgres` OS user when the tests run as root (initdb,
 * pg_ctl and pgbouncer all refuse root), and as the current user otherwise.
 */
export function asPostgresUser(binary: string, args: string[]): { command: string; args: string[] } {
  return process.getuid?.() === 0 ? { command: 'runuser', args: ['-u', 'postgres', '--', binary, ...args] } : { command: binary, args };
}

export function startPrivatePostgres(port: number, settings: { maxConnections?: number } = {}): PrivatePostgres {
  const bin = findBinDir();
  if (!bin) throw new Error('initdb not found');
  const dir = mkdtempSync(join(tmpdir(), 'tekil-pg-'));
  chmodSync(dir, 0o777);
  const dataDir = join(dir, 'data');
  const run = (tool: string, args: string[]) => {
    const { command, args: argv } = asPostgresUser(join(bin, tool), args);
    execFileSync(command, argv, { stdio: 'pipe' });
  };
  run('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=${settings.maxConnections ?? 50}`;
  const start = () => run('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const stop = () => run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
  const crash = () => run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    crash,
    destroy() {
      try {
        stop();
      } catch {
        // already stopped
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
