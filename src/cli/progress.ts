/**
 * One progress line for long CLI commands, on stderr so stdout stays the command's answer.
 * On a terminal the line is redrawn in place (at most ten times a second); elsewhere (a log, a pipe)
 * a plain line is written every few seconds (none for a command done sooner); with --json nothing is
 * written at all.
 */

/** The part of a stream the progress line needs: tests pass a fake that says isTTY. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressState {
  done: number;
  /** Null or absent when the total is not known (a provider's listing). */
  total?: number | null;
  /** What is being worked on: a page cursor, a job id. */
  at?: string | null;
}

export interface ProgressOptions {
  stream?: ProgressStream;
  /** --json: no progress output at all. */
  quiet?: boolean;
  /** Between plain lines when not on a terminal (default 5 s, or $TEKIL_PROGRESS_INTERVAL ms). */
  plainEveryMs?: number;
  now?: () => number;
}

const TTY_EVERY_MS = 100;

function plainInterval(env: NodeJS.ProcessEnv = process.env): number {
  const ms = Number(env.TEKIL_PROGRESS_INTERVAL);
  return Number.isFinite(ms) && ms > 0 ? ms : 5000;
}

/** 75 → "1m15s", 3700 → "1h01m". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** `replay-bulk 1200/5000 24% 300/s ETA 13s job_ab12` (total, ETA and position only when known). */
export function formatProgress(label: string, state: ProgressState, elapsedMs: number, unit = ''): string {
  const parts = [label];
  const total = state.total ?? null;
  parts.push(total === null ? `${state.done}${unit}` : `${state.done}/${total}${unit}`);
  if (total !== null && total > 0) parts.push(`${Math.floor((100 * state.done) / total)}%`);
  const rate = elapsedMs > 0 ? (state.done * 1000) / elapsedMs : 0;
  parts.push(`${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s`);
  if (total !== null && rate > 0 && state.done < total) parts.push(`ETA ${formatDuration((total - state.done) / rate)}`);
  if (state.at) parts.push(`at ${state.at}`);
  return parts.join(' ');
}

export class Progress {
  private readonly stream: ProgressStream;
  private readonly tty: boolean;
  private readonly quiet: boolean;
  private readonly plainEveryMs: number;
  private readonly now: () => number;
  private readonly started: number;
  private lastWrite = -Infinity;
  private drawn = false;
  private state: ProgressState = { done: 0 };

  constructor(
    private readonly label: string,
    options: ProgressOptions = {},
    private readonly unit = '',
  ) {
    this.stream = options.stream ?? process.stderr;
    this.tty = this.stream.isTTY === true;
    this.quiet = options.quiet === true;
    this.plainEveryMs = options.plainEveryMs ?? plainInterval();
    this.now = options.now ?? Date.now;
    this.started = this.now();
    // Off a terminal the first line waits one interval: a quick command leaves no line in a log.
    if (!this.tty) this.lastWrite = this.started;
  }

  /** Takes the new state; writes when the terminal's or the log's pace allows. */
  update(state: ProgressState): void {
    this.state = state;
    if (this.quiet) return;
    const now = this.now();
    if (now - this.lastWrite < (this.tty ? TTY_EVERY_MS : this.plainEveryMs)) return;
    this.lastWrite = now;
    this.write();
  }

  /** The line as it stands now. */
  line(): string {
    return formatProgress(this.label, this.state, this.now() - this.started, this.unit);
  }

  /** Removes the terminal's line (before a final message or the report); nothing elsewhere. */
  clear(): void {
    if (this.tty && this.drawn) this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }

  private write(): void {
    let text = this.line();
    if (this.tty) {
      // One line, never wrapped: a wrapped line cannot be redrawn in place.
      const width = (this.stream.columns ?? 80) - 1;
      if (text.length > width) text = `${text.slice(0, width - 1)}…`;
      this.stream.write(`\r\x1b[2K${text}`);
      this.drawn = true;
    } else {
      this.stream.write(`${text}\n`);
    }
  }
}

/**
 * Calls `onInterrupt` on the first Ctrl-C (SIGINT) instead of dying mid-work; a second Ctrl-C exits
 * at once. Answers a function that removes the handler.
 */
export function handleInterrupt(onInterrupt: () => void): () => void {
  let seen = false;
  const handler = () => {
    if (seen) process.exit(130);
    seen = true;
    onInterrupt();
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}
