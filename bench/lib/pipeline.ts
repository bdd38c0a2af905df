// Drives events through a tekil process with every role (test/fixtures/pipeline-process.ts): a sink
// that counts what the dispatcher sends, signed events posted over a connection pool, RSS readings.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { createScheme } from '../../src/signing/index.js';

export const PIPELINE_SECRET = 'whsec_pipeline_memory_secret';

export interface Sink {
  url: string;
  received(): number;
  close(): Promise<void>;
}

/** An HTTP endpoint that answers 200 at once and counts the requests. */
export async function startSink(): Promise<Sink> {
  let received = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(200, { 'content-length': '2' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}/hook`,
    received: () => received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export interface Pipeline {
  child: ChildProcess;
  url: string;
  /** RSS in bytes, after a collection when the process runs with --expose-gc. */
  rssAfterGc(): Promise<number>;
  /** RSS in bytes as the kernel reports it now, without a collection. */
  rssNow(): number;
  stop(): Promise<void>;
}

/** Starts the pipeline process against a database URL (none: the embedded store in `dataDir`). */
export async function startPipeline(env: { databaseUrl?: string; dataDir: string; sinkUrl: string }): Promise<Pipeline> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/fixtures/pipeline-process.ts'], {
    env: { ...process.env, PIPELINE_DATABASE_URL: env.databaseUrl ?? '', PIPELINE_DATA_DIR: env.dataDir, PIPELINE_SINK_URL: env.sinkUrl },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const waiters: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  lines.on('line', (line) => waiters.shift()?.resolve(line));
  child.once('exit', (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`the pipeline process exited (${code})`));
  });
  const nextLine = () => new Promise<string>((resolve, reject) => waiters.push({ resolve, reject }));
  // Log lines (JSON: a warning at start, such as autovacuum off) come before the pipeline's own.
  let ready = await nextLine();
  while (ready.startsWith('{')) ready = await nextLine();
  const url = /^ready (\S+)/.exec(ready)?.[1];
  if (!url) throw new Error(`unexpected first line: ${ready}`);
  return {
    child,
    url,
    async rssAfterGc() {
      const answer = nextLine();
      child.stdin!.write('rss\n');
      return Number(/^rss (\d+)/.exec(await answer)?.[1]);
    },
    rssNow() {
      return Number(readFileSync(`/proc/${child.pid}/statm`, 'utf8').split(' ')[1]) * 4096;
    },
    async stop() {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Posts `count` new signed events (ids `<prefix><n>`), `concurrency` at a time, each with a body
 * of about `bodyBytes` so that anything kept per event shows in the process's memory.
 */
export async function sendEvents(url: string, options: { prefix: string; count: number; concurrency: number; bodyBytes: number }): Promise<void> {
  const scheme = createScheme('paymos');
  const pool = new Pool(url, { connections: options.concurrency });
  const pad = 'x'.repeat(Math.max(0, options.bodyBytes - 200));
  let next = 0;
  const lane = async () => {
    while (next < options.count) {
      const n = next++;
      const id = `${options.prefix}${n}`;
      const body = JSON.stringify({ event_id: id, event_type: 'invoice.paid', data: { invoice_id: `inv_${id}`, status: 'paid', note: pad } });
      const res = await pool.request({
        method: 'POST',
        path: '/in/mem',
        body,
        headers: { 'content-type': 'application/json', ...scheme.sign({ body, secrets: [PIPELINE_SECRET], id }) },
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`event ${id}: HTTP ${res.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, lane));
  } finally {
    await pool.close();
  }
}
