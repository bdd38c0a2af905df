import type { Context, Service } from '../service.js';
import { addSignatureFailures } from '../store/sql/alerts/signature-failures.js';
import { receiverMetrics } from './metrics.js';

/** How often a receiving process adds its signature failures to the store. */
const FLUSH_MS = 5_000;

/**
 * Adds this process's signature failures (counted in memory on the receive path) to the store every
 * few seconds, so the alerts' evaluator, in whichever process it runs, sees every receiver's. One
 * statement per flush, and none when nothing failed. Counts a failed flush could not write are kept
 * for the next one.
 */
export function createSignatureFailureFlusher(ctx: Context, options: { flushMs?: number } = {}): Service & { flush(): Promise<void> } {
  const counts = receiverMetrics(ctx.metrics).signatureFailures;
  let timer: NodeJS.Timeout | undefined;

  async function flush(): Promise<void> {
    if (counts.size === 0) return;
    const taken = [...counts];
    counts.clear();
    try {
      await addSignatureFailures.run(ctx.db, { sources: taken.map(([s]) => s), counts: taken.map(([, n]) => n) });
    } catch (err) {
      for (const [source, n] of taken) counts.set(source, (counts.get(source) ?? 0) + n);
      ctx.logger.warn({ err }, 'signature failure counts not stored; kept for the next flush');
    }
  }

  return {
    name: 'signature-failures',
    flush,
    async start() {
      timer = setInterval(() => void flush(), options.flushMs ?? FLUSH_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await flush();
    },
  };
}
