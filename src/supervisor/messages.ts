/** What a supervised process and its supervisor tell each other over the cluster's IPC channel. */
export type ChildMessage = { type: 'tekil:ready'; url: string } | { type: 'tekil:metrics-request'; id: number };
export type SupervisorMessage = { type: 'tekil:metrics-response'; id: number; text?: string; error?: string };

export function isChildMessage(value: unknown): value is ChildMessage {
  const type = (value as { type?: unknown } | null)?.type;
  return type === 'tekil:ready' || type === 'tekil:metrics-request';
}

export function isSupervisorMessage(value: unknown): value is SupervisorMessage {
  return (value as { type?: unknown } | null)?.type === 'tekil:metrics-response';
}

/** The environment variable that tells a forked process which slot it fills (1-based). */
export const PROCESS_INDEX_ENV = 'TEKIL_PROCESS_INDEX';

/**
 * The port every supervised process binds, chosen by the supervisor before the first fork (a free one
 * for `--port 0`), so restarted processes join the same shared socket as the ones still running.
 */
export const PROCESS_PORT_ENV = 'TEKIL_PROCESS_PORT';
