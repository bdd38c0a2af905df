import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { isSupervisorMessage, PROCESS_PORT_ENV, type ChildMessage } from './messages.js';

/** True in a process forked by `tekil start --processes N`. */
export function isSupervisedProcess(): boolean {
  return cluster.isWorker;
}

/** The port a restarted process must bind (the one its group already serves on), when there is one. */
export function supervisedPort(env: NodeJS.ProcessEnv): number | undefined {
  const port = Number(env[PROCESS_PORT_ENV]);
  return Number.isInteger(port) && port > 0 ? port : undefined;
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

/** Tells the supervisor this process listens (it announces the shared URL once every process does). */
export function reportReady(url: string): void {
  send({ type: 'tekil:ready', url });
}

let nextRequest = 0;

/**
 * In a supervised process, /metrics answers for the whole box: the process hands its registry to
 * prom-client's cluster support and asks the supervisor for the sum over every process. Counters and
 * histograms add up; the store-read gauges are declared with the `max` aggregator so they are not
 * multiplied by the number of processes.
 */
export function clusterMetricsReader(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // prom-client starts answering the supervisor's collection requests when a registry is constructed.
  new AggregatorRegistry();
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextRequest++;
      const timer = setTimeout(() => {
        process.off('message', onMessage);
        reject(new Error('the supervisor did not answer the metrics request within 10 s'));
      }, 10_000);
      const onMessage = (message: unknown) => {
        if (!isSupervisorMessage(message) || message.id !== id) return;
        clearTimeout(timer);
        process.off('message', onMessage);
        if (message.error !== undefined) reject(new Error(`aggregating metrics failed: ${message.error}`));
        else resolve(message.text ?? '');
      };
      process.on('message', onMessage);
      send({ type: 'tekil:metrics-request', id });
    });
}
