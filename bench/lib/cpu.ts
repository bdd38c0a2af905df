// CPU accounting for benchmarks that share two cores with the Postgres server they measure.
import { readdirSync, readFileSync } from 'node:fs';

/** Anything that runs a query: tekil's Db, a node-postgres pool or client. */
interface Querier {
  query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

/** CPU seconds (user + system) a process on this machine has used so far; undefined when it is gone. */
export function processCpu(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks
  } catch {
    return undefined; // not on this machine, or already gone: not counted
  }
}

/**
 * CPU seconds used so far by a process and every process below it (a server run with --processes N:
 * the supervisor and its children). Children that exited are not counted.
 */
export function processTreeCpu(pid: number): number | undefined {
  const own = processCpu(pid);
  if (own === undefined) return undefined;
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
      const list = children.get(ppid);
      if (list) list.push(Number(name));
      else children.set(ppid, [Number(name)]);
    } catch {
      // gone between the listing and the read
    }
  }
  let total = own;
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length > 0) {
    const child = stack.pop()!;
    total += processCpu(child) ?? 0;
    stack.push(...(children.get(child) ?? []));
  }
  return total;
}

/**
 * CPU seconds used so far by each Postgres backend serving this database (Linux /proc; Postgres runs on
 * this machine in the benchmark's setting). The difference over the dispatch phase is Postgres's share
 * of the work, which competes with the dispatcher for the same cores.
 */
export async function backendCpu(db: Querier, dbName: string): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [dbName]);
  const seconds = new Map<number, number>();
  for (const { pid } of rows) {
    const s = processCpu(pid);
    if (s !== undefined) seconds.set(pid, s);
  }
  return seconds;
}

export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, s] of after) total += s - (before.get(pid) ?? 0);
  return total;
}

/** The median of a non-empty list, by `key` (the lower middle one for an even count). */
export function medianBy<T>(runs: readonly T[], key: (r: T) => number): T {
  const sorted = [...runs].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}
