// Redis for the BullMQ peers: the machine's own server (BENCH_REDIS_URL, default redis://127.0.0.1:6379,
// usually run with `appendonly no`: an acknowledged job can be lost in a crash), and a private
// redis-server started by the bench with `appendonly yes` and `appendfsync always` (every write is on
// disk before Redis answers): the durable BullMQ.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

export const machineRedisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface RedisTarget {
  url: string;
  /** redis-server's pid (from INFO), so its CPU can be read from /proc. */
  pid: number;
  /** What an acknowledged enqueue survives, as printed beside the figures. */
  durability: string;
}

/** Connects to `url`, answers its pid and durability; throws when it does not answer within 2 s. */
export async function probeRedis(url: string): Promise<RedisTarget> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {}); // the failed connect below says it
  try {
    await client.connect();
    const info = await client.info('server');
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    const [, appendonly] = (await client.config('GET', 'appendonly')) as string[];
    const [, fsync] = (await client.config('GET', 'appendfsync')) as string[];
    const durability =
      appendonly === 'yes'
        ? fsync === 'always'
          ? 'Redis AOF, fsync per write'
          : `Redis AOF, fsync ${fsync}: up to 1 s of jobs lost in a crash`
        : 'Redis appendonly no: not durable';
    return { url, pid, durability };
  } catch (err) {
    throw new Error(`Redis at ${url} does not answer`, { cause: err });
  } finally {
    client.disconnect();
  }
}

/** A free loopback port, by asking the kernel for one. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export interface PrivateRedis extends RedisTarget {
  stop(): Promise<void>;
}

/** Starts /usr/bin/redis-server (BENCH_REDIS_SERVER) with fsync on every write, in a temp dir. */
export async function startFsyncRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'tekil-peers-redis-'));
  const port = await freePort();
  const bin = process.env.BENCH_REDIS_SERVER ?? '/usr/bin/redis-server';
  const child: ChildProcess = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
    {
      stdio: 'ignore',
    },
  );
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (err) => reject(new Error(`${bin} did not start`, { cause: err })));
    child.once('exit', (code) => reject(new Error(`${bin} exited (${code})`)));
  });
  failed.catch(() => {}); // raced below; an exit after the start is not an error
  const url = `redis://127.0.0.1:${port}`;
  const probe = async (): Promise<RedisTarget> => {
    for (let i = 0; ; i++) {
      try {
        return await probeRedis(url);
      } catch (err) {
        if (i === 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  let target: RedisTarget;
  try {
    target = await Promise.race([failed, probe()]);
  } catch (err) {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...target,
    async stop() {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Deletes every key under `prefix` (a run's queue), without touching anything else on that Redis. */
export async function dropPrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    for await (const keys of client.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length > 0) await client.unlink(...keys);
    }
  } finally {
    client.disconnect();
  }
}

/** ioredis connection options for BullMQ (a Worker needs maxRetriesPerRequest null). */
export function bullConnection(url: string): { host: string; port: number; maxRetriesPerRequest: null } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
}
