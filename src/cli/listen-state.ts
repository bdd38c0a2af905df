import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Where `tekil listen` is in a source's deliveries, kept on disk so a restart resumes there.
 *
 * A delivery's received_at is its transaction's start time, so a delivery can become visible after
 * one with a later received_at was already forwarded. A single "after this time" cursor would skip
 * it. The state is therefore a floor (nothing received before it is forwarded) kept a look-back
 * behind the newest forwarded delivery, and the ids forwarded since the floor: every poll reads from
 * the floor and forwards what is not in `forwarded`.
 */
export interface ListenState {
  version: 1;
  remote: string;
  source: string;
  /** ISO time: deliveries received before it are never forwarded. */
  floor: string;
  /** Event id → received_at (ISO) of each delivery forwarded at or after the floor (a Map: ids are the provider's text). */
  forwarded: Map<string, string>;
}

interface SavedState extends Omit<ListenState, 'forwarded'> {
  forwarded: Array<[string, string]>;
}

/** How far behind the newest forwarded delivery the floor stays: far longer than any intake transaction. */
export const LOOKBACK_MS = 120_000;

export function defaultStatePath(source: string): string {
  return `.tekil/listen-${encodeURIComponent(source)}.json`;
}

/** The saved state, or undefined when there is none (or it is for another remote or source). */
export function readState(path: string, remote: string, source: string): ListenState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the listen cursor ${path}`, { cause: err });
  }
  const parsed = JSON.parse(text) as Partial<SavedState>;
  if (parsed.version !== 1 || parsed.remote !== remote || parsed.source !== source) return undefined;
  if (typeof parsed.floor !== 'string' || !Array.isArray(parsed.forwarded)) return undefined;
  return { version: 1, remote, source, floor: parsed.floor, forwarded: new Map(parsed.forwarded) };
}

/**
 * Writes the state to a temporary file, flushes it to disk and renames it over the old one: a kill or a
 * power cut leaves one or the other, whole.
 */
export function writeState(path: string, state: ListenState): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const saved: SavedState = { ...state, forwarded: [...state.forwarded] };
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, JSON.stringify(saved));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * Records one forwarded delivery and moves the floor up to a look-back behind the newest one. A
 * received_at that is not a time (a remote's answer is not trusted) moves nothing; its id is kept, so it
 * is not sent again.
 */
export function markForwarded(state: ListenState, eventId: string, receivedAt: string): void {
  state.forwarded.set(eventId, receivedAt);
  let newest = 0;
  for (const at of state.forwarded.values()) {
    const ms = Date.parse(at);
    if (Number.isFinite(ms)) newest = Math.max(newest, ms);
  }
  const floor = Math.max(Date.parse(state.floor), newest - LOOKBACK_MS);
  state.floor = new Date(floor).toISOString();
  for (const [id, at] of state.forwarded) if (Date.parse(at) < floor) state.forwarded.delete(id);
}
