// Load generation for the HTTP benchmarks: signed requests prepared up front, replayed by wrk from a
// Lua script, against a server started in its own process.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { createScheme } from '../../src/signing/index.js';

export { replayScript, requireWrk, runWrk, type WrkResult } from './wrk.js';

/** One prepared request: its body and its headers, lower-cased as a server sees them. */
export interface PreparedRequest {
  body: Buffer;
  headers: Record<string, string>;
}

/**
 * Signed raw HTTP requests written to `file` for wrk, 10% of them repeats of a recent delivery (as
 * provider retries are); answers how many distinct ids there are, and the requests themselves.
 */
export function preparePayloads(file: string, options: { count: number; secret: string; prefix?: string }): { distinct: number; requests: PreparedRequest[] } {
  const prefix = options.prefix ?? 'evt_';
  const scheme = createScheme('paymos');
  const fd = openSync(file, 'w');
  const now = Math.floor(Date.now() / 1000);
  const requests: PreparedRequest[] = [];
  let distinct = 0;
  let chunk: string[] = [];
  for (let i = 0; i < options.count; i++) {
    const repeat = distinct > 100 && Math.random() < 0.1;
    const n = repeat ? distinct - 1 - Math.floor(Math.random() * Math.min(distinct, 1000)) : distinct++;
    const id = `${prefix}${n.toString(36).padStart(8, '0')}`;
    const body = JSON.stringify({
      event_id: id,
      event_type: 'invoice.paid',
      version: 1,
      occurred_at: new Date((now - 60) * 1000).toISOString(),
      data: {
        invoice_id: `inv_${(n * 7).toString(36).padStart(8, '0')}`,
        merchant_id: 'mrc_4f7a2c',
        status: 'paid',
        amount: '1250.00',
        paid_amount: '1250.00',
        currency: 'TRY',
        customer: { email: `buyer${n}@example.com` },
        metadata: { order_id: `ord_${n}` },
      },
    });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Paymos-Webhooks/1.0',
      ...scheme.sign({ body, secrets: [options.secret], id, timestamp: now }),
    };
    const head = [
      'POST /in/bench HTTP/1.1',
      'Host: bench',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      '',
    ].join('\r\n');
    const raw = head + body;
    chunk.push(`${Buffer.byteLength(raw)}\n${raw}`);
    requests.push({ body: Buffer.from(body), headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) });
    if (chunk.length === 5000) {
      writeSync(fd, chunk.join(''));
      chunk = [];
    }
  }
  writeSync(fd, chunk.join(''));
  closeSync(fd);
  return { distinct, requests };
}

/** Starts a bench server (`node --import tsx …`, with BENCH_NODE_ARGS) and resolves once its output matches `readyPattern`. */
export function startServer(name: string, args: string[], env: NodeJS.ProcessEnv, readyPattern: RegExp): Promise<ChildProcess> {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    // Only the last few KiB of stderr are kept (for the error below), and stdout is read until the
    // ready line and then dropped: a server that logs under load (a warning per dead delivery, say)
    // would otherwise grow these strings for the whole run and take CPU from the run being measured.
    let ready = false;
    const watch = (d: Buffer) => {
      if (ready) return;
      // Tested before trimming, so a ready line early in a large chunk is not cut off.
      const seen = out + d.toString();
      ready = readyPattern.test(seen);
      out = ready ? '' : seen.slice(-8192);
      if (ready) resolve(child);
    };
    // tekil's banner ("tekil listening on …") is on stderr, a bench server's "ready" on stdout.
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-8192);
      watch(d);
    });
    child.stdout!.on('data', watch);
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${err}`)));
  });
}

export async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}
