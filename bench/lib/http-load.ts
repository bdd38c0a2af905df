// Load generation for the HTTP benchmarks: signed requests prepared up front, replayed by wrk from a
// Lua script, against a server started in its own process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { createScheme } from '../../src/signing/index.js';

/** Exits with an install hint when wrk is missing. */
export function requireWrk(): void {
  if (spawnSync('wrk', ['--version']).error) {
    process.stderr.write('wrk is not installed. Install it with:\n  apt-get update && apt-get install -y wrk\n');
    process.exit(1);
  }
}

/** Signed raw HTTP requests, 10% of them repeats of a recent delivery (as provider retries are). */
export function preparePayloads(file: string, options: { count: number; secret: string; prefix?: string }): number {
  const payloadCount = options.count;
  const prefix = options.prefix ?? 'evt_';
  const scheme = createScheme('paymos');
  const fd = openSync(file, 'w');
  const now = Math.floor(Date.now() / 1000);
  let distinct = 0;
  let chunk: string[] = [];
  for (let i = 0; i < payloadCount; i++) {
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
    const headers = scheme.sign({ body, secrets: [options.secret], id, timestamp: now });
    const head = [`POST /in/bench HTTP/1.1`, 'Host: bench', 'Content-Type: application/json', 'User-Agent: Paymos-Webhooks/1.0',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${Buffer.byteLength(body)}`, '', ''].join('\r\n');
    const raw = head + body;
    chunk.push(`${Buffer.byteLength(raw)}\n${raw}`);
    if (chunk.length === 5000) {
      writeSync(fd, chunk.join(''));
      chunk = [];
    }
  }
  writeSync(fd, chunk.join(''));
  closeSync(fd);
  return distinct;
}

export function luaScript(dataFile: string): string {
  return `
local reqs, n, i = {}, 0, 0
function init(args)
  local f = assert(io.open(${JSON.stringify(dataFile)}, "rb"))
  local data = f:read("*a")
  f:close()
  local pos = 1
  while pos <= #data do
    local nl = data:find("\\n", pos, true)
    local len = tonumber(data:sub(pos, nl - 1))
    n = n + 1
    reqs[n] = data:sub(nl + 1, nl + len)
    pos = nl + 1 + len
  end
  i = (tonumber(args[1]) or 0) % n
end
function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
`;
}

export interface WrkResult {
  requests: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  errors: string;
}

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

export function runWrk(port: number, script: string, durationSec: number, offset: number, connections: number): WrkResult {
  const res = spawnSync('wrk', ['-t1', `-c${connections}`, `-d${durationSec}s`, '--latency', '--timeout', '10s', '-s', script, `http://127.0.0.1:${port}/`, '--', String(offset)], {
    encoding: 'utf8',
  });
  const out = res.stdout;
  if (res.status !== 0) throw new Error(`wrk failed: ${res.stderr || out}`);
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  return {
    requests: num(/(\d+) requests in/),
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50ms: toMs(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? ''),
    p99ms: toMs(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? ''),
    non2xx: num(/Non-2xx or 3xx responses:\s+(\d+)/),
    errors: /Socket errors:[^\n]*/.exec(out)?.[0] ?? '',
  };
}

export function startServer(name: string, args: string[], env: NodeJS.ProcessEnv, readyPattern: RegExp): Promise<ChildProcess> {
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (readyPattern.test(out)) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${err}`)));
  });
}

export async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

