// What every path of bench:peers hands the runner: one contender per side (tekil or a peer), each run
// once per round, in an order the runner alternates.
import { processCpu } from '../lib/cpu.js';
import type { RedisTarget } from './redis.js';

export type PathName = 'receive' | 'process' | 'send';
export const pathNames: readonly PathName[] = ['receive', 'process', 'send'];
export type PeerName = 'insert' | 'graphile-worker' | 'pg-boss' | 'bullmq' | 'bullmq-fsync';
export const peerNames: readonly PeerName[] = ['insert', 'graphile-worker', 'pg-boss', 'bullmq', 'bullmq-fsync'];

/**
 * One run: items a second and CPU per item in µs (receive: wrk's run; process and send: the backlog's
 * drain), p50 and p99 latency (receive: wrk's per request; process and send: the steady phase's).
 */
export interface PeerRun {
  rate: number;
  p50ms: number | undefined;
  p99ms: number | undefined;
  nodeUs: number;
  postgresUs: number;
  redisUs: number | undefined;
}

export interface Contender {
  /** 'tekil' or the peer's name, as the summary line prints it. */
  name: 'tekil' | PeerName;
  /** What runs, with its settings. */
  label: string;
  /** What an acknowledged item survives. */
  durability: string;
  run(): Promise<PeerRun>;
}

export interface PathBench {
  path: PathName;
  contenders: Contender[];
  close(): Promise<void>;
}

/** The Redis servers the BullMQ peers use: the machine's and the private fsync one. */
export interface RedisTargets {
  bullmq?: RedisTarget;
  'bullmq-fsync'?: RedisTarget;
}

/** CPU seconds of redis-server so far (0 when there is none to read). */
export function redisCpu(target: RedisTarget | undefined): number {
  return target ? (processCpu(target.pid) ?? 0) : 0;
}
