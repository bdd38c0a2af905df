import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from './helpers/db.js';
import { waitUntil } from './helpers/wait.js';
import { sendEvents, startPipeline, startSink, type Pipeline, type Sink } from '../bench/lib/pipeline.js';

const MB = 1024 * 1024;
/** Large bodies make a per-event leak large: keeping each body (or a request holding it) costs 75 MB here. */
const BODY_BYTES = 96 * 1024;
// The warm-up is as long as the measured run: the allocator's high-water mark under whatever load the
// machine has (more requests in flight at once on a loaded runner) is reached before the first reading,
// so what grows after it is what the events left behind (800 × 96 KiB would be 75 MB).
const WARMUP = 800;
const MEASURED = 800;

/**
 * A real tekil process with every role (receive → process → publish → dispatch to a sink): after a
 * warm-up, RSS after a full collection must not grow by a clear leak's worth over the next events.
 * The bound is generous (40 MB, against 75 MB for one retained copy of each body) so that allocator noise
 * cannot fail it. Postgres only: the embedded store's WASM heap grows with the data it holds.
 * `npm run bench:memory` is the long version.
 */
describe.skipIf(!onPostgres)('memory through every role', () => {
  let t: TestDb;
  let sink: Sink;
  let pipeline: Pipeline;
  const dataDir = mkdtempSync(join(tmpdir(), 'tekil-memory-test-'));

  beforeAll(async () => {
    t = await createTestDb();
    sink = await startSink();
    pipeline = await startPipeline({ databaseUrl: t.url!, dataDir, sinkUrl: sink.url });
  });
  afterAll(async () => {
    await pipeline?.stop();
    await sink?.close();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`RSS after GC stays flat over ${MEASURED} events of ${BODY_BYTES / 1024} KiB`, async () => {
    await sendEvents(pipeline.url, { prefix: 'evt_warm_', count: WARMUP, concurrency: 16, bodyBytes: BODY_BYTES });
    await waitUntil(() => sink.received() >= WARMUP, 60_000, 'the warm-up events at the sink');
    const before = await pipeline.rssAfterGc();
    await sendEvents(pipeline.url, { prefix: 'evt_measured_', count: MEASURED, concurrency: 16, bodyBytes: BODY_BYTES });
    await waitUntil(() => sink.received() >= WARMUP + MEASURED, 60_000, 'the measured events at the sink');
    const after = await pipeline.rssAfterGc();
    expect((after - before) / MB, `RSS ${(before / MB).toFixed(1)} → ${(after / MB).toFixed(1)} MB`).toBeLessThan(40);
    // About 20 s on an idle machine; the bound leaves room for a loaded CI runner (the waits above have their own).
  }, 150_000);
});
