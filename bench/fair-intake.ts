/**
 * npm run bench:fair-intake — is intake shared fairly? Another client's webhooks, one after another,
 * each on its own connection, measured:
 *   alone:  nothing else happening;
 *   (d):    while 70 connections from 127.0.0.2 declare `Content-Length: 1048576`, send `{` and hold
 *           (each reopened a second after the server cuts or refuses it);
 *   (e):    while 500 connections from 127.0.0.3 and 127.0.0.4 send one header byte every 2 s (also
 *           reopened a second after they are cut or refused).
 * For each case: p50 / p99 / max of the other client's webhook (request sent → answer read) and the
 * ratio to alone, and the count of 503s. Goals: p99 ≤ 2 × alone, no 503. tekil runs in a process of its
 * own with the receiver role and the default settings, on a fresh Postgres database; every connection
 * stays on 127.0.0.x.
 *
 * Knobs (environment):
 *   TEKIL_BENCH_DATABASE_URL  Postgres server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_REQUESTS       webhooks measured per case (default 300)
 *   BENCH_SETTLE         seconds the attack runs before measuring (default 3)
 *   BENCH_BASELINE       another checkout's directory (e.g. main's): the same cases against its tekil, on
 *                        a database of its own, printed beside this one's
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScheme } from '../src/signing/index.js';
import { adminQuery, databaseUrl, freshDatabaseName } from './lib/database.js';
import { startServer, stopServer } from './lib/http-load.js';

const requests = Number(process.env.BENCH_REQUESTS ?? 300);
const settleMs = Number(process.env.BENCH_SETTLE ?? 3) * 1000;
const baseline = process.env.BENCH_BASELINE;
const SECRET = 'whsec_bench_fair_intake_secret';
const PORT = 18_480;
/** The config files' directory (made by the measuring process only). */
let dir = '';
const scheme = createScheme('paymos');
/** What a slow-header connection sends after its first byte, one byte every 2 s: a request that never ends. */
const SLOW_HEAD = `OST /in/shop HTTP/1.1\r\nHost: x\r\nX-Pad: ${'x'.repeat(200)}`;

interface Answer {
  status: number;
  ms: number;
}

/** One signed webhook from 127.0.0.1 on a fresh connection: its status and how long it took. */
function webhook(port: number, i: number): Promise<Answer> {
  const body = JSON.stringify({ event_id: `evt_fair_${process.pid}_${Date.now()}_${i}`, event_type: 'invoice.paid', data: { amount: '12.50' } });
  const headers = Object.entries({ 'content-type': 'application/json', ...scheme.sign({ body, secrets: [SECRET] }) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const raw = `POST /in/shop HTTP/1.1\r\nHost: bench\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.1' });
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), ms: performance.now() - started }));
    socket.write(raw);
  });
}

/**
 * Keeps `count` attacking connections open from `from`, each reopened a second after the server closes
 * it; `start` is written at once, then `drip` (if any) one byte every 2 s. Returns a stop.
 */
function attack(port: number, from: string, count: number, start: string, drip?: string): () => void {
  let stopped = false;
  const open = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const one = () => {
    if (stopped) return;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    open.add(socket);
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.once('connect', () => socket.write(start));
    let sent = 0;
    const dripping = drip === undefined ? undefined : setInterval(() => socket.writable && sent < drip.length && socket.write(drip[sent++]!), 2_000);
    socket.once('close', () => {
      clearInterval(dripping);
      open.delete(socket);
      const again = setTimeout(() => {
        timers.delete(again);
        one();
      }, 1_000);
      timers.add(again);
    });
  };
  for (let i = 0; i < count; i++) one();
  return () => {
    stopped = true;
    for (const t of timers) clearTimeout(t);
    for (const s of open) s.destroy();
  };
}

interface CaseResult {
  name: string;
  p50: number;
  p99: number;
  max: number;
  refused: number;
  other: number;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function measure(port: number, name: string): Promise<CaseResult> {
  const ms: number[] = [];
  let refused = 0;
  let other = 0;
  for (let i = 0; i < requests; i++) {
    const a = await webhook(port, i);
    ms.push(a.ms);
    if (a.status === 503) refused++;
    else if (a.status !== 200) other++;
  }
  ms.sort((x, y) => x - y);
  return { name, p50: pct(ms, 50), p99: pct(ms, 99), max: ms[ms.length - 1]!, refused, other };
}

/** The attacks, each run in a process of its own so that its sockets do not slow the measuring client. */
const ATTACKS: Record<string, (port: number) => Array<() => void>> = {
  d: (port) => [attack(port, '127.0.0.2', 70, 'POST /in/shop HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{')],
  e: (port) => [attack(port, '127.0.0.3', 250, 'P', SLOW_HEAD), attack(port, '127.0.0.4', 250, 'P', SLOW_HEAD)],
};

async function during(port: number, name: string, which: keyof typeof ATTACKS): Promise<CaseResult> {
  const attacker = spawn(process.execPath, ['--import', 'tsx', 'bench/fair-intake.ts'], {
    env: { ...process.env, FAIR_INTAKE_ATTACK: which, FAIR_INTAKE_PORT: String(port) },
    stdio: 'ignore',
  });
  await new Promise((r) => setTimeout(r, settleMs));
  try {
    return await measure(port, name);
  } finally {
    const exited = new Promise<void>((resolve) => attacker.once('exit', () => resolve()));
    attacker.kill('SIGTERM');
    await exited;
    // Let the server see the attack's connections go before the next case.
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

async function runAgainst(label: string, script: string): Promise<CaseResult[]> {
  const dbName = freshDatabaseName('tekil_fair_intake');
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const config = join(dir, `${label}.yaml`);
  writeFileSync(config, `store:\n  url: "${databaseUrl(dbName)}"\nsources:\n  shop:\n    scheme: paymos\n    secrets: ["${SECRET}"]\n    tolerance: 3600\n`);
  let child: ChildProcess | undefined;
  try {
    child = await startServer(label, [script], { TEKIL_LOG_LEVEL: 'error', BENCH_CONFIG: config, BENCH_ROLES: 'receiver', PORT: String(PORT) }, /ready/);
    // Warm up (JIT, the store's pool), then the cases.
    for (let i = 0; i < 50; i++) await webhook(PORT, i);
    const alone = await measure(PORT, 'alone');
    const slowBodies = await during(PORT, '(d) 70 slow bodies', 'd');
    const slowHeaders = await during(PORT, '(e) 500 slow headers', 'e');
    return [alone, slowBodies, slowHeaders];
  } finally {
    if (child) await stopServer(child);
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  }
}

function print(label: string, results: CaseResult[]): boolean {
  const alone = results[0]!;
  let pass = true;
  console.log(`\n${label}: another client's webhook, ${requests} per case (ms)`);
  console.log('case                      p50      p99      max   p99/alone  503s  other');
  for (const r of results) {
    const ratio = r.p99 / alone.p99;
    const ok = r === alone || (ratio <= 2 && r.refused === 0);
    if (!ok) pass = false;
    console.log(
      `${r.name.padEnd(22)} ${r.p50.toFixed(1).padStart(7)}  ${r.p99.toFixed(1).padStart(7)}  ${r.max.toFixed(1).padStart(7)}  ${ratio.toFixed(2).padStart(9)}  ${String(r.refused).padStart(4)}  ${String(r.other).padStart(5)}${r === alone ? '' : ok ? '  ok' : '  over the goal'}`,
    );
  }
  return pass;
}

const attackName = process.env.FAIR_INTAKE_ATTACK;
if (attackName !== undefined) {
  // The attacker process: runs until the bench stops it.
  const stops = ATTACKS[attackName]!(Number(process.env.FAIR_INTAKE_PORT));
  process.on('SIGTERM', () => {
    for (const stop of stops) stop();
    process.exit(0);
  });
} else {
  await main();
}

async function main(): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'tekil-fair-intake-'));
  try {
    const mine = await runAgainst('tekil', 'bench/ingest/tekil.ts');
    const pass = print('tekil (this checkout)', mine);
    if (baseline) print(`baseline (${baseline})`, await runAgainst('baseline', join(baseline, 'bench/ingest/tekil.ts')));
    console.log(`\nbench:fair-intake ${pass ? 'PASS' : 'FAIL'}: goals p99 ≤ 2 × alone and no 503 while (d) and (e) run`);
    process.exitCode = pass ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
