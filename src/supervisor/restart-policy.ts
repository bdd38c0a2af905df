/**
 * When a supervised process exits on its own, how long to wait before starting it again, or whether to
 * give up. A process that was ready and then ran for a while (`healthyAfterMs`) was killed or crashed
 * for a reason of the moment: it is restarted after the base delay. One that exits before it is ready,
 * or soon after, is failing at start-up (a bad setting, a database it cannot reach, a handler module
 * that throws): each further quick exit doubles the delay, and after `maxQuickExits` in a row the
 * supervisor gives up, since restarting for ever would only hide the fault. Eight in a row span about
 * 35 s of delays, so a database restart or a short outage is waited out rather than given up on.
 *
 * A process killed by a signal (`kill -9`, the OOM killer, an operator) did not fail at start-up: it
 * is restarted after the base delay and counts neither for nor against giving up — otherwise kills
 * that happen to land soon after each restart would stop a healthy group for good.
 */
export interface RestartPolicyOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  healthyAfterMs: number;
  maxQuickExits: number;
}

export const defaultRestartPolicy: RestartPolicyOptions = { baseDelayMs: 500, maxDelayMs: 10_000, healthyAfterMs: 10_000, maxQuickExits: 8 };

export type RestartDecision = { restartInMs: number } | { giveUp: true; quickExits: number };

/** The restart bookkeeping of one process slot (slot 2 keeps its history across its restarts). */
export class SlotRestarts {
  #quickExits = 0;

  constructor(private readonly options: RestartPolicyOptions = defaultRestartPolicy) {}

  /**
   * `readyForMs`: how long the process had been ready when it exited; undefined when it never was.
   * `killed`: it was ended by a signal rather than exiting by itself.
   */
  exited(readyForMs: number | undefined, killed = false): RestartDecision {
    if (killed) return { restartInMs: this.options.baseDelayMs };
    if (readyForMs !== undefined && readyForMs >= this.options.healthyAfterMs) this.#quickExits = 0;
    this.#quickExits += 1;
    if (this.#quickExits >= this.options.maxQuickExits) return { giveUp: true, quickExits: this.#quickExits };
    const delay = this.options.baseDelayMs * 2 ** (this.#quickExits - 1);
    return { restartInMs: Math.min(this.options.maxDelayMs, delay) };
  }
}
