/**
 * `npm run chaos`: 100,000 webhooks (20% duplicated, copies at once and later, reordered, non-ASCII
 * ids and types) into a multi-process tekil on a private throw-away PostgreSQL cluster, while a random
 * tekil process is SIGKILLed every few seconds and PostgreSQL is stopped with `-m immediate` and
 * started again. Then it checks that nothing was lost and nothing done twice (see docs/operations.md)
 * and exits 1 on any violation.
 *
 *   npm run chaos -- --events 100000 --kill-every 3s --pg-restarts 2 --seed 42 [--kills N] [--processes 2]
 *   (or CHAOS_EVENTS, CHAOS_KILL_EVERY, CHAOS_PG_RESTARTS, CHAOS_SEED, CHAOS_KILLS, CHAOS_PROCESSES, CHAOS_CONCURRENCY)
 */
import { parseArgs } from 'node:util';
import { parseDuration } from '../../src/config/units.js';
import { privatePostgresUnavailable } from '../../test/helpers/private-postgres.js';
import { runChaos } from './run.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: process.env.CHAOS_EVENTS ?? '100000' },
    'kill-every': { type: 'string', default: process.env.CHAOS_KILL_EVERY ?? '3s' },
    'pg-restarts': { type: 'string', default: process.env.CHAOS_PG_RESTARTS ?? '2' },
    kills: { type: 'string', default: process.env.CHAOS_KILLS },
    seed: { type: 'string', default: process.env.CHAOS_SEED ?? String(Date.now() % 1_000_000) },
    processes: { type: 'string', default: process.env.CHAOS_PROCESSES ?? '2' },
    concurrency: { type: 'string', default: process.env.CHAOS_CONCURRENCY ?? '48' },
    'settle-timeout': { type: 'string', default: process.env.CHAOS_SETTLE_TIMEOUT ?? '5m' },
  },
});

const whole = (name: string, text: string, min: number) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: expected a whole number of at least ${min}, got "${text}"`);
  return n;
};

const duration = (name: string, text: string) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw new Error(`--${name}: expected a duration such as 3s or 500ms, got "${text}"`);
  return ms;
};

const unavailable = privatePostgresUnavailable();
if (unavailable) {
  process.stderr.write(`chaos: cannot make a private PostgreSQL cluster here: ${unavailable}\n`);
  process.exit(2);
}
const report = await runChaos({
  events: whole('events', values.events, 10),
  killEveryMs: duration('kill-every', values['kill-every']),
  pgRestarts: whole('pg-restarts', values['pg-restarts'], 0),
  ...(values.kills !== undefined ? { maxKills: whole('kills', values.kills, 0) } : {}),
  seed: whole('seed', values.seed, 0),
  processes: whole('processes', values.processes, 1),
  concurrency: whole('concurrency', values.concurrency, 1),
  settleTimeoutMs: duration('settle-timeout', values['settle-timeout']),
  log: (line) => process.stdout.write(`${line}\n`),
});
process.stdout.write(`\n${report.summary}\n`);
process.exit(report.violations.length ? 1 : 0);
