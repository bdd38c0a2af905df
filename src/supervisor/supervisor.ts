import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { TekilError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isChildMessage, PROCESS_INDEX_ENV, PROCESS_PORT_ENV, type SupervisorMessage } from './messages.js';
import { defaultRestartPolicy, SlotRestarts, type RestartPolicyOptions } from './restart-policy.js';

export interface SupervisorOptions {
  /** How many processes to keep running; each runs the same roles on the same shared port. */
  processes: number;
  /**
   * The port every process binds, decided before the first fork. Node's cluster shares one listening
   * socket per (host, port) as the processes ask for it: were the first ones to ask for port 0 and a
   * restarted one for the port that 0 became, the primary would open a second socket on a taken port.
   */
  port: number;
  logger: Logger;
  /** After SIGTERM to the children, how long they have to drain before they are killed. */
  shutdownTimeoutMs: number;
  restartPolicy?: RestartPolicyOptions;
  /** Called once, when every process has reported it listens, with the shared URL. */
  onReady?: (url: string) => void;
}

export interface Supervisor {
  /** Resolves when every child has exited after `stop()`; rejects with PROCESS_CRASH_LOOP on giving up. */
  done: Promise<void>;
  /** Graceful stop: SIGTERM to every child, SIGKILL to the ones still running after the timeout. */
  stop(reason: string): void;
  /** The children's process ids, by slot (1-based), for operators and the chaos test. */
  pids(): Map<number, number>;
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  readyAt: number | undefined;
  restarts: SlotRestarts;
  restartTimer: NodeJS.Timeout | undefined;
}

/**
 * The primary of `tekil start --processes N`: forks N copies of this command with node:cluster (they
 * share the listening port, the primary hands out connections), restarts one that exits, and on stop
 * asks each to drain. It also answers the children's /metrics with the sum over all of them
 * (prom-client's AggregatorRegistry), so a scrape through the shared port sees the whole box.
 */
export function startSupervisor(options: SupervisorOptions): Supervisor {
  const { logger } = options;
  const policy = options.restartPolicy ?? defaultRestartPolicy;
  const aggregator = new AggregatorRegistry();
  const slots: Slot[] = Array.from({ length: options.processes }, (_, i) => ({
    index: i + 1,
    worker: undefined,
    readyAt: undefined,
    restarts: new SlotRestarts(policy),
    restartTimer: undefined,
  }));
  let stopping = false;
  let announced = false;
  let failure: TekilError | undefined;
  let resolveDone!: () => void;
  let rejectDone!: (err: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  let readyUrl: string | undefined;

  const finishIfAllExited = () => {
    if (!stopping || slots.some((s) => s.worker !== undefined)) return;
    if (failure) rejectDone(failure);
    else resolveDone();
  };

  const answerMetrics = (worker: Worker, id: number) => {
    const reply = (message: SupervisorMessage) => {
      if (worker.isConnected()) worker.send(message);
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ type: 'tekil:metrics-response', id, text }),
      (err: unknown) => reply({ type: 'tekil:metrics-response', id, error: err instanceof Error ? err.message : String(err) }),
    );
  };

  const fork = (slot: Slot) => {
    slot.restartTimer = undefined;
    if (stopping) return;
    const worker = cluster.fork({ [PROCESS_INDEX_ENV]: String(slot.index), [PROCESS_PORT_ENV]: String(options.port) });
    slot.worker = worker;
    slot.readyAt = undefined;
    logger.info({ process: slot.index, childPid: worker.process.pid }, 'process started');
    worker.on('message', (message: unknown) => {
      if (!isChildMessage(message)) return;
      if (message.type === 'tekil:metrics-request') return answerMetrics(worker, message.id);
      slot.readyAt = Date.now();
      readyUrl ??= message.url;
      if (!announced && slots.every((s) => s.readyAt !== undefined)) {
        announced = true;
        options.onReady?.(readyUrl);
      }
    });
    worker.on('exit', (code, signal) => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      if (stopping) {
        logger.info({ process: slot.index, code, signal }, 'process stopped');
        return finishIfAllExited();
      }
      const readyFor = slot.readyAt === undefined ? undefined : Date.now() - slot.readyAt;
      const decision = slot.restarts.exited(readyFor, signal !== null);
      if ('giveUp' in decision) {
        logger.fatal({ process: slot.index, code, signal, quickExits: decision.quickExits }, 'process keeps exiting soon after start; giving up');
        failure = new TekilError(
          'PROCESS_CRASH_LOOP',
          `process ${slot.index} exited ${decision.quickExits} times in a row before it was ready or soon after (last: ${signal ?? `exit code ${code}`})`,
          {
            hint: 'read the log lines of that process above: a bad setting, an unreachable database or a handler module that throws',
          },
        );
        return stop('crash loop');
      }
      logger.warn({ process: slot.index, code, signal, restartInMs: decision.restartInMs }, 'process exited; restarting it');
      slot.restartTimer = setTimeout(() => fork(slot), decision.restartInMs);
    });
  };

  function stop(reason: string): void {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'stopping every process');
    for (const slot of slots) {
      if (slot.restartTimer) clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
      slot.worker?.process.kill('SIGTERM');
    }
    const killer = setTimeout(() => {
      for (const slot of slots) {
        if (!slot.worker) continue;
        logger.error({ process: slot.index }, 'process did not stop in time; killing it');
        slot.worker.process.kill('SIGKILL');
      }
    }, options.shutdownTimeoutMs);
    killer.unref();
    finishIfAllExited();
  }

  for (const slot of slots) fork(slot);
  return {
    done,
    stop,
    pids() {
      const pids = new Map<number, number>();
      for (const slot of slots) if (slot.worker?.process.pid !== undefined) pids.set(slot.index, slot.worker.process.pid);
      return pids;
    },
  };
}
