import { describeAnswer, isSuccess, callControl } from './http.js';
import { effectFigures, failed, passed, skipped, times, type CheckRun } from './outcome.js';
import type { Delivery } from './session.js';

const answersText = (d: Delivery): string => d.answers.map(describeAnswer).join(', ');
const nowSeconds = () => Math.floor(Date.now() / 1000);

export const deliver: CheckRun = async (s) => {
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'deliver' });
  const answer = await s.send(e);
  const figures = { answer: describeAnswer(answer), answer_ms: answer.ms };
  if (!isSuccess(answer)) {
    const refused = answer.status !== undefined && answer.status >= 400 && answer.status < 500;
    const why = answer.unexpectedBody
      ? ''
      : refused
        ? ': the receiver refuses valid requests (check --url, --scheme and --secret against its configuration)'
        : ': the receiver fails or is too slow on a plain delivery';
    return failed(`a correctly signed invoice.paid was answered ${describeAnswer(answer)}${why}`, figures);
  }
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const all = { ...figures, ...effectFigures(effect) };
  if (effect.count === 0)
    return failed(
      `answered ${describeAnswer(answer)} but the effect never ran within ${s.options.effectTimeoutMs} ms: the work is lost after the answer, or the effects URL does not count it`,
      all,
    );
  if (effect.count > 1) return failed(`one delivery ${times(effect.count)}: the receiver runs the effect more than once per request`, all);
  if (effect.state !== undefined && effect.state !== 'paid') return failed(`the invoice ended in state ${effect.state}, not paid`, all);
  return passed(`${describeAnswer(answer)} in ${answer.ms} ms; the effect ran once`, all);
};

export const duplicate: CheckRun = async (s) => {
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'duplicate' });
  const first = await s.deliver(e);
  if (!first.ok) return failed(`the first copy was never answered 2xx (${answersText(first)})`, { first: answersText(first) });
  await s.settledEffect(invoiceId, (x) => x.count >= 1);
  // A later second, so the copy carries a different signature, as a provider's resend does.
  const copy = await s.send(e, { timestamp: nowSeconds() + 1 });
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const figures = { first: answersText(first), copy: describeAnswer(copy), ...effectFigures(effect) };
  if (!isSuccess(copy))
    return failed(`the resent copy was answered ${describeAnswer(copy)}: a duplicate must be answered 2xx, or the provider keeps retrying it`, figures);
  if (effect.count > 1)
    return failed(`the same delivery (same event id, fresh signature) ${times(effect.count)}: the receiver does not deduplicate on the event id`, figures);
  if (effect.count === 0) return failed('the effect never ran', figures);
  return passed(`the copy was answered ${describeAnswer(copy)}; the effect ran once`, figures);
};

export const concurrent: CheckRun = async (s) => {
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  const copies = s.options.concurrentCopies;
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'concurrent' });
  const deliveries = await Promise.all(Array.from({ length: copies }, () => s.deliver(e)));
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const firstAnswers: Record<string, number> = {};
  for (const d of deliveries) {
    const key = d.answers[0] ? describeAnswer(d.answers[0]) : 'none';
    firstAnswers[key] = (firstAnswers[key] ?? 0) + 1;
  }
  const lost = deliveries.filter((d) => !d.ok);
  const figures = {
    copies,
    first_answers: Object.entries(firstAnswers).map(([k, n]) => `${n}× ${k}`),
    retried: deliveries.filter((d) => d.answers.length > 1).length,
    never_2xx: lost.length,
    ...effectFigures(effect),
  };
  if (effect.count > 1) {
    return failed(
      `${copies} copies of one delivery sent at once ${times(effect.count)}: the receiver does not deduplicate on the event id, or its duplicate check is a read before the work instead of a unique key inside the effect's transaction`,
      figures,
    );
  }
  if (lost.length)
    return failed(`${lost.length} of ${copies} copies were never answered 2xx, even after retries (last: ${answersText(lost[0] as Delivery)})`, figures);
  if (effect.count === 0) return failed('the effect never ran', figures);
  return passed(`all ${copies} copies answered 2xx${figures.retried ? ` (${figures.retried} after a retry)` : ''}; the effect ran once`, figures);
};

export const busyDuplicate: CheckRun = async (s) => {
  const { controlUrl, providerTimeoutMs } = s.options;
  if (controlUrl === undefined) return skipped('needs --control (slow-next): without it prove cannot keep a run busy');
  const slowMs = providerTimeoutMs * 2;
  await callControl(controlUrl, 'slow-next', providerTimeoutMs, slowMs);
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'busy-duplicate' });
  // The monotonic clock: the wall clock can step, and the figure below is reported against the timeout.
  const started = performance.now();
  // Like a provider: wait up to the timeout, then send the copy while the first run still works.
  const first = await s.send(e);
  // The copy lands once the provider's timeout has passed, even when the first request was answered
  // earlier (a receiver that queues answers at once and is busy after), as the article's step does.
  await s.sleepUntil(started, providerTimeoutMs);
  const copySentAfterMs = Math.floor(performance.now() - started);
  const copy = await s.deliver(e);
  await s.sleepUntil(started, slowMs);
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const figures = {
    slow_ms: slowMs,
    provider_timeout_ms: providerTimeoutMs,
    copy_sent_after_ms: copySentAfterMs,
    first: describeAnswer(first),
    copy: answersText(copy),
    ...effectFigures(effect),
  };
  if (effect.count > 1) {
    return failed(
      `a copy sent while the first run was still working ${times(effect.count)}: the receiver does not deduplicate copies that arrive during processing (the event id must be taken under a unique key inside the work's transaction, so the copy waits or is refused)`,
      figures,
    );
  }
  if (!copy.ok && !isSuccess(first))
    return failed(`neither the first request nor the copy was answered 2xx (${describeAnswer(first)}; ${answersText(copy)})`, figures);
  if (effect.count === 0) return failed('the effect never ran after both runs ended', figures);
  return passed(`first ${describeAnswer(first)}, copy ${answersText(copy)}; the effect ran once`, figures);
};

export const secondEndpoint: CheckRun = async (s) => {
  const { callbackUrl } = s.options;
  if (callbackUrl === undefined) return skipped("needs --callback-url: the receiver's second URL for the same events");
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'second-endpoint' });
  const first = await s.deliver(e);
  if (!first.ok) return failed(`the event was never answered 2xx at --url (${answersText(first)})`, { first: answersText(first) });
  await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const second = await s.deliver(e, { url: callbackUrl });
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const figures = { first: answersText(first), second: answersText(second), ...effectFigures(effect) };
  if (effect.count > 1)
    return failed(`the same event id sent to the callback URL ${times(effect.count)}: the receiver deduplicates per URL, not on the event id alone`, figures);
  if (!second.ok) return failed(`the callback URL never answered 2xx (${answersText(second)})`, figures);
  if (effect.count === 0) return failed('the effect never ran', figures);
  return passed(`both URLs answered 2xx; the effect ran once`, figures);
};
