import type { Db } from './db.js';

/** A promise that resolves on the next `notify()` or after `ms`, whichever comes first. */
export class Wakeup {
  #waiters: Array<() => void> = [];
  /** A notify nobody was waiting for: the next wait returns at once, so it is not lost. */
  #pending = false;

  /** Wakes every waiter (or the next wait, when none waits). */
  notify(): void {
    this.#pending = true;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  wait(ms: number): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#waiters = self.#waiters.filter((w) => w !== done);
        self.#pending = false;
        resolve();
      }
      this.#waiters.push(done);
    });
  }
}

export interface WakeLoopOptions {
  /** The NOTIFY channel whose every notification means "look for work now", whatever its payload. */
  channel: string;
  /** Longest sleep without a wake-up: the fallback for lost notifications and for work nothing notifies. */
  pollIntervalMs: number;
  /** Rounds that may run at once, each in its own loop (the worker's claim loops on Postgres); default 1. */
  concurrency?: number | undefined;
  /**
   * One round of work; resolves true when more is waiting, and the next round starts without sleeping.
   * `slept` says this round follows a sleep (a wake-up or the poll interval).
   */
  run: (round: { slept: boolean }) => Promise<boolean>;
  /** A round threw (the failures in a row so far): answers how long to sleep first. Default: the poll interval. */
  onError?: ((err: unknown, failures: number) => number) | undefined;
  /** Called on each notification, after the loop is woken. */
  onNotify?: ((payload: string) => void) | undefined;
  /** LISTEN could not be set up: the loop polls meanwhile and tries again after `retryInMs`. */
  onListenFailed?: ((err: unknown, retryInMs: number) => void) | undefined;
}

/** Backoff between attempts to set up a LISTEN that failed: 100 ms doubling to 30 s (the adapters reconnect a lost one likewise). */
const LISTEN_RETRY_MIN_MS = 100;
const LISTEN_RETRY_MAX_MS = 30_000;

/**
 * The wake loop of every background role (the worker's claims, the dispatcher's claims, the event
 * stream's polls): rounds of work, woken by NOTIFY on a channel, by `wake()`, and by polling as the
 * fallback. Wake-ups during a round run one more round after it. A LISTEN that cannot be set up at
 * start is tried again with backoff; one lost later is re-established by the store's adapter, which
 * then notifies with an empty payload. `stop()` wakes the loops and resolves once their rounds have
 * ended. Start and stop may be called again, in any order: each waits for the one before.
 */
export class WakeLoop {
  readonly #db: Pick<Db, 'listen'>;
  readonly #options: WakeLoopOptions;
  #signal = new Wakeup();
  #running = false;
  #rounds = 0;
  #loops: Array<Promise<void>> = [];
  #unlisten: (() => Promise<void>) | undefined;
  #listenRetry: NodeJS.Timeout | undefined;
  #listening: Promise<void> | undefined;
  #transition: Promise<void> = Promise.resolve();

  constructor(db: Pick<Db, 'listen'>, options: WakeLoopOptions) {
    this.#db = db;
    this.#options = options;
  }

  /** Whether a round is running now. */
  get busy(): boolean {
    return this.#rounds > 0;
  }

  /** Asks for a round soon: wakes the sleeping loops, or runs one more round after the current ones. */
  wake(): void {
    if (this.#running) this.#signal.notify();
  }

  /** Subscribes (so no notification between it and the first round is lost), then starts the loops. */
  start(): Promise<void> {
    return this.#serially(async () => {
      if (this.#running) return;
      this.#running = true;
      this.#signal = new Wakeup();
      await this.#subscribe(0);
      for (let i = 0; i < (this.#options.concurrency ?? 1); i++) this.#loops.push(this.#loop());
    });
  }

  /** Resolves once every round has ended and the subscription is gone. */
  stop(): Promise<void> {
    return this.#serially(async () => {
      if (!this.#running) return;
      this.#running = false;
      clearTimeout(this.#listenRetry);
      this.#signal.notify();
      await Promise.all(this.#loops.splice(0));
      await this.#listening;
      const unlisten = this.#unlisten;
      this.#unlisten = undefined;
      await unlisten?.().catch(() => {});
    });
  }

  #serially(step: () => Promise<void>): Promise<void> {
    const done = this.#transition.then(step);
    this.#transition = done.catch(() => {});
    return done;
  }

  async #loop(): Promise<void> {
    const { run, pollIntervalMs, onError } = this.#options;
    let failures = 0;
    let slept = false;
    while (this.#running) {
      let sleepMs: number | undefined;
      let polling = false;
      this.#rounds++;
      try {
        const more = await run({ slept });
        failures = 0;
        polling = !more;
        if (!more) sleepMs = pollIntervalMs;
      } catch (err) {
        failures++;
        sleepMs = onError ? onError(err, failures) : pollIntervalMs;
      } finally {
        this.#rounds--;
      }
      slept = false;
      if (sleepMs === undefined || !this.#running) continue;
      await this.#signal.wait(sleepMs);
      // After a failure the next round is a retry, not a wake-up.
      slept = polling;
    }
  }

  async #subscribe(failures: number): Promise<void> {
    const { channel, onNotify, onListenFailed } = this.#options;
    try {
      const unlisten = await this.#db.listen(channel, (payload) => {
        this.wake();
        onNotify?.(payload);
      });
      if (!this.#running) {
        await unlisten().catch(() => {});
        return;
      }
      this.#unlisten = unlisten;
      // Notifications sent while it was down are lost: look now.
      if (failures > 0) this.wake();
    } catch (err) {
      if (!this.#running) return;
      const ceiling = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MIN_MS * 2 ** failures);
      const retryInMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
      onListenFailed?.(err, retryInMs);
      this.#listenRetry = setTimeout(() => {
        this.#listenRetry = undefined;
        this.#listening = this.#subscribe(failures + 1);
      }, retryInMs);
      // A pending retry must not keep the process alive on its own.
      this.#listenRetry.unref();
    }
  }
}
