// tekil's receiver without its store: the same app as `tekil start --role receiver` builds (Fastify with
// tekil's logger, hooks, timeouts and the receiver's route: verification, extraction, metrics, the
// acknowledgement deadline), with a writer that answers `accepted` without the group commit.
// It is not a mode of tekil (nothing here is committed, so nothing may be acknowledged in production):
// it is the bench's measure of what tekil's own HTTP work costs, between the bare ceiling and the real
// receiver. The store is opened as the real server opens it and left idle.
//
// The writer answers the requests of one event-loop turn together, at the end of the turn
// (setImmediate), as the real writer answers a batch together when its commit returns: a request is
// never answered inside the callback that read it. Answering each at once instead
// (BENCH_HTTP_AT_ONCE=1) measures a different server: every answer's write wakes the load generator
// for that one answer, which on this kind of machine cost tekil's route more than its own work
// (docs/performance.md, "The HTTP-only line, answered per turn").
import { buildApp } from '../../src/app.js';
import { loadConfigFile } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import type { InboxWriter } from '../../src/receiver/batcher.js';
import { openConfiguredStore } from '../../src/store/open.js';
import { resolveSettings } from '../../src/settings.js';

const config = await loadConfigFile(process.env.BENCH_CONFIG!);
const settings = resolveSettings(config, process.env);
const db = await openConfiguredStore(settings, config);
const ctx = { config, settings, db, logger: createLogger({ level: settings.logLevel }), metrics: createMetricsRegistry() };

let endOfTurn: Promise<{ outcome: 'accepted' }> | undefined;
const answerPerTurn: InboxWriter = {
  receive: () =>
    (endOfTurn ??= new Promise((resolve) =>
      setImmediate(() => {
        endOfTurn = undefined;
        resolve({ outcome: 'accepted' });
      }),
    )),
};
const answerAtOnce: InboxWriter = { receive: () => Promise.resolve({ outcome: 'accepted' }) };

const app = await buildApp({ ctx, roles: new Set(['receiver']), batcher: process.env.BENCH_HTTP_AT_ONCE === '1' ? answerAtOnce : answerPerTurn });
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.stdout.write('ready\n');
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => db.close())
      .then(() => process.exit(0)),
);
