import type { Queryable } from '../store/db.js';
import { isValueRefusal, pgErrorCode } from '../pg-error.js';
import { writeCompletions } from './write-completions.js';
import type { OutboxCompletion } from './types.js';

/** Thrown when the store failed (not a row's values); `unwritten` are the completions to write again later. */
export class CompletionsNotRecorded extends Error {
  constructor(
    readonly unwritten: OutboxCompletion[],
    cause: unknown,
  ) {
    super(`${unwritten.length} finished attempts could not be recorded`, { cause });
    this.name = 'CompletionsNotRecorded';
  }
}

export interface RecordCompletionsOptions {
  dispatcher: string;
  disableAfter: number;
  /** Failed attempts in a row that open an endpoint's circuit breaker; 0 turns it off. */
  breakerFailures?: number;
  /** Publish `message.attempts_exhausted` for each delivery given up (docs/alerts.md). */
  announceExhausted?: boolean;
  /** Told about each completion the store refused, with the store's error. */
  onRefused(completion: OutboxCompletion, err: unknown): void;
}

/**
 * Writes a group of finished attempts in one statement. When the store refuses the group's values, one
 * bad row must not hold back the others (their receivers would be sent the same messages again at
 * every retry): the group is written again row by row, and a row refused on its own is recorded as a
 * failed delivery, with an error that says why, instead. Answers the completions as recorded.
 * Throws CompletionsNotRecorded when the store itself fails.
 */
export async function recordCompletions(sql: Queryable, batch: readonly OutboxCompletion[], options: RecordCompletionsOptions): Promise<OutboxCompletion[]> {
  try {
    await writeCompletions(sql, batch, options.dispatcher, options.disableAfter, options.breakerFailures, options.announceExhausted);
    return [...batch];
  } catch (err) {
    if (!isValueRefusal(err)) throw new CompletionsNotRecorded([...batch], err);
  }
  const recorded: OutboxCompletion[] = [];
  for (let i = 0; i < batch.length; i++) {
    const completion = batch[i]!;
    try {
      const written = await writeOne(sql, completion, options);
      if (written) recorded.push(written);
    } catch (err) {
      throw new CompletionsNotRecorded(batch.slice(i), err);
    }
  }
  return recorded;
}

/**
 * One completion alone; refused, it is recorded as failed with the reason (and without its answer's
 * body). Refused even so (its delivery deleted meanwhile), it is dropped: its lease runs out, and the
 * next claim records the attempt as lost, if the delivery is still there.
 */
async function writeOne(sql: Queryable, completion: OutboxCompletion, options: RecordCompletionsOptions): Promise<OutboxCompletion | undefined> {
  try {
    await writeCompletions(sql, [completion], options.dispatcher, options.disableAfter, options.breakerFailures, options.announceExhausted);
    return completion;
  } catch (err) {
    if (!isValueRefusal(err)) throw err;
    options.onRefused(completion, err);
    const sqlState = pgErrorCode(err)!;
    const failed: OutboxCompletion = {
      ...completion,
      next: 'failed',
      delayMs: 0,
      // The breaker's next probe comes from the same ladder as the refused retry time.
      probeDelayMs: 0,
      responseBody: null,
      error:
        `${completion.error ?? 'attempt'}; not recorded as it was: the store refused its values (SQLSTATE ${sqlState}; e.g. a next attempt beyond the timestamp range), so the delivery is failed`.slice(
          0,
          1000,
        ),
    };
    try {
      await writeCompletions(sql, [failed], options.dispatcher, options.disableAfter, options.breakerFailures, options.announceExhausted);
    } catch (again) {
      if (!isValueRefusal(again)) throw again;
      options.onRefused(failed, again);
      return undefined;
    }
    return failed;
  }
}
