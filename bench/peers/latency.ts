// The steady-load phase of bench:peers' process and send runs: items enqueued at a fixed offered rate
// (the same on every side), each carrying its enqueue time t0 in its payload (`"t0":<ms>`, wall clock
// with sub-millisecond precision), and the time from t0 to the item's end:
//   process  the item's completion committed (tekil: the batch transaction; graphile-worker: its batched
//            completion statement; pg-boss: its complete() statement; BullMQ: the `completed` event, after
//            the job was moved to completed in Redis), seen in this process;
//   send     the sink received the signed request (latency-sink.ts, its own process).
// t0 is taken just before the enqueue call (INSERT, add_job, send(), queue.add(), publish), so the span
// includes the enqueue's own commit on every side.
import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/** Milliseconds since the epoch, sub-millisecond: comparable between processes on this machine. */
export const wallClock = (): number => performance.timeOrigin + performance.now();

const t0Pattern = /"t0":(\d+(?:\.\d+)?)/;
/** The enqueue time an item's payload carries, if any. */
export function t0Of(payload: string): number | undefined {
  const m = t0Pattern.exec(payload);
  return m ? Number(m[1]) : undefined;
}

/** Where the ends of a steady phase's items are seen. */
export interface LatencyEnd {
  /** Items whose end was seen since the last take(). */
  seen(): Promise<number>;
  /** The latencies seen (ms), forgotten afterwards. */
  take(): Promise<number[]>;
}

/** Ends seen in this process: the runner calls `completed` once an item's completion has committed. */
export class CompletionEnd implements LatencyEnd {
  #samples: number[] = [];
  completed(payload: string, t1 = wallClock()): void {
    const t0 = t0Of(payload);
    if (t0 !== undefined) this.#samples.push(t1 - t0);
  }
  async seen() {
    return this.#samples.length;
  }
  async take() {
    const s = this.#samples;
    this.#samples = [];
    return s;
  }
}

/** The sending path's sink (latency-sink.ts) in its own process; its ends are the requests it receives. */
export interface LatencySink extends LatencyEnd {
  url: string;
  stop(): void;
}

export async function startLatencySink(): Promise<LatencySink> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./latency-sink.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  const ask = <T>(cmd: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (m) => resolve(m as T));
      child.send(cmd);
    });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    seen: async () => (await ask<{ timed: number }>('count')).timed,
    take: async () => (await ask<{ latencies: number[] }>('take')).latencies,
    stop: () => child.kill(),
  };
}

/** The steady phase's knobs, the same for every contender of a path. */
export interface SteadyLoad {
  rate: number;
  seconds: number;
}

export interface LatencyResult {
  p50ms: number;
  p99ms: number;
}

/** The value below which `q` of the sorted samples fall (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Offers `rate × seconds` items, `enqueue(i, t0)` each at its time on an open loop (a slow enqueue does
 * not delay the next ones), waits until every item's end has been seen (at most `drainMs` after the last
 * enqueue), and answers the p50 and p99 of their latencies.
 */
export async function steadyPhase(
  load: SteadyLoad,
  end: LatencyEnd,
  enqueue: (i: number, t0: number) => Promise<unknown>,
  drainMs = 30_000,
): Promise<LatencyResult> {
  await end.take(); // anything of an earlier phase
  const total = Math.round(load.rate * load.seconds);
  const inFlight: Promise<unknown>[] = [];
  let failure: unknown;
  const started = performance.now();
  let next = 0;
  while (next < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * load.rate) / 1000) + 1);
    for (; next < due; next++) {
      inFlight.push(
        enqueue(next, wallClock()).catch((err: unknown) => {
          failure ??= err;
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  await Promise.all(inFlight);
  if (failure) throw new Error('an enqueue of the steady phase failed', { cause: failure });
  const giveUp = performance.now() + drainMs;
  for (let seen = await end.seen(); seen < total; seen = await end.seen()) {
    if (performance.now() > giveUp) throw new Error(`steady phase: ${seen} of ${total} items ended ${drainMs / 1000} s after the last enqueue`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const samples = (await end.take()).sort((a, b) => a - b);
  return { p50ms: quantile(samples, 0.5), p99ms: quantile(samples, 0.99) };
}
