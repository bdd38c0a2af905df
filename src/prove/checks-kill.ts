import { callOptionalControl, describeAnswer } from './http.js';
import { effectFigures, failed, passed, skipped, times, type CheckRun } from './outcome.js';
import type { Delivery } from './session.js';

const answersText = (d: Delivery): string => d.answers.map(describeAnswer).join(', ');

/**
 * 001's fifth scenario, "kuyruk çalışanını işlem ortasında durdurup yeniden başlatın": the receiver's
 * worker is killed in the middle of a job (`POST <control>/kill-next`, an optional action: the next
 * job's worker dies after its work started, and the receiver restarts it), then prove waits for the
 * effect. A killed worker cannot roll anything back itself: only work that commits with its
 * "processed" mark (one transaction) comes out exactly once, by the retry or the lease's expiry.
 */
export const workerKilled: CheckRun = async (s) => {
  const { controlUrl, providerTimeoutMs } = s.options;
  if (controlUrl === undefined) return skipped('needs --control (kill-next): without it prove cannot kill a worker mid-job');
  const control = await callOptionalControl(controlUrl, 'kill-next', providerTimeoutMs);
  if (!control.supported) {
    return skipped(
      `the receiver does not implement the optional POST ${controlUrl.replace(/\/+$/, '')}/kill-next (HTTP ${control.status}): prove cannot kill its worker mid-job, so a crash between the work and its commit is not proved`,
      { control: control.status },
    );
  }
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'worker-killed' });
  // A synchronous receiver's worker dies holding the request (no answer: the provider retries); a
  // queueing one answered 2xx before, and its restarted worker (or another) takes the job again.
  const delivery = await s.deliver(e);
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const figures = { answers: answersText(delivery), ...effectFigures(effect) };
  if (!delivery.ok)
    return failed(`the event was never answered 2xx after the worker was killed (${answersText(delivery)}): the receiver did not come back`, figures);
  if (effect.count === 0) {
    return failed(
      `after its worker was killed mid-job, the event was answered ${answersText(delivery)} but its effect never ran: the job was lost with the worker (marked processed or taken off the queue before its work committed)`,
      figures,
    );
  }
  if (effect.count > 1) {
    return failed(
      `after its worker was killed mid-job, the effect ${times(effect.count)}: the killed job's work was kept without its "processed" mark, and the restarted worker did it again; commit the work and the mark in one transaction`,
      figures,
    );
  }
  return passed(`the worker was killed mid-job and restarted; answered ${answersText(delivery)}; exactly one effect`, figures);
};
