import type { CheckStatus, Figures } from './checks.js';
import type { Effect } from './http.js';
import type { ProveSession } from './session.js';

/** What one check found; the runner adds the id, title, fix sentence and duration. */
export interface Outcome {
  status: CheckStatus;
  message: string;
  figures: Figures;
}

export type CheckRun = (session: ProveSession) => Promise<Outcome>;

export const passed = (message: string, figures: Figures = {}): Outcome => ({ status: 'passed', message, figures });
export const failed = (message: string, figures: Figures = {}): Outcome => ({ status: 'failed', message, figures });
export const skipped = (message: string, figures: Figures = {}): Outcome => ({ status: 'skipped', message, figures });

/** An effect's figures: its count, and its state when the receiver reports one. */
export const effectFigures = (e: Effect): Figures => ({ count: e.count, ...(e.state === undefined ? {} : { state: e.state }) });

/** "ran once" / "ran 3 times" / "never ran". */
export const times = (count: number): string => (count === 0 ? 'never ran' : count === 1 ? 'ran once' : `ran ${count} times`);
