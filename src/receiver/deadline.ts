import { TekilError } from '../errors.js';

/**
 * Runs `write` and settles with it, unless `deadlineMs` (from the request's body being received,
 * `elapsedMs` ago; 0 disables) passes first: then ACK_DEADLINE_EXCEEDED (503). The write is not cancelled — if its row commits
 * later, the provider's retry is answered `duplicate`, which is the point: no 2xx without a commit,
 * and no request held past the provider's own timeout.
 */
export function withinDeadline<T>(deadlineMs: number, elapsedMs: number, write: () => Promise<T>): Promise<T> {
  if (deadlineMs <= 0) return write();
  const remaining = deadlineMs - elapsedMs;
  const exceeded = () =>
    new TekilError('ACK_DEADLINE_EXCEEDED', `the delivery was not committed within receiver.ack_deadline (${deadlineMs} ms); retry shortly`);
  return new Promise<T>((resolve, reject) => {
    // A request that used up the deadline before its write started is still written, and answered
    // 503 at once: its retry then finds the row.
    const timer = setTimeout(() => reject(exceeded()), Math.max(0, remaining));
    write().then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
