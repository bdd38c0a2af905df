/**
 * When a supervised process exits on its own, how long to wait before starting it again, or whether to
 * give up. A process that was ready and then ran for a while (`healthyAfterMs`) was killed or crashed
 * for a reason of the moment: it is restarted after the base delay. One that exits before it is ready,
 * or soon after, is failing at start-up (a bad setting, a database it cannot reach, a handler module
 * that throws): each further quick exit doubles the delay, and after `maxQuickExits` in a row the
 * supervisor gives up, since restarting for ever would only hide the fault.
 */
export interface RestartPolicyOptions {
  baseDelayMs: number;
  maxDelayMs: number;
  healthyAfterMs: number;
  maxQuickExits: number;
}

export const defaultRestartPolicy: RestartPolicyOptions = { baseDelayMs: 500, maxDelayMs: 10_000, healthyAfterMs: 10_000, maxQuickExits: 5 };

export type RestartDecision = { restartInMs: number } | { giveUp: true; quickExits: number };

/** The restart bookkeeping of one process slot (slot 2 keeps its history across its restarts). */
export class SlotRestarts {
  #quickExits = 0;

  constructor(private readonly options: RestartPolicyOptions = defaultRestartPolicy) {}

  /** `readyForMs`: how long the process had been ready when it exited; undefined when it never was. */
  exited(readyForMs: number | undefined): RestartDecision {
    if (readyForMs !== undefined && readyForMs >= this.options.healthyAfterMs) this.#quickExits = 0;
    this.#quickExits += 1;
    if (this.#quickExits >= this.options.maxQuickExits) return { giveUp: true, quickExits: this.#quickExits };
    const delay = this.options.baseDelayMs * 2 ** (this.#quickExits - 1);
    return { restartInMs: Math.min(this.options.maxDelayMs, delay) };
  }
}
