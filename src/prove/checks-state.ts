import { callControl, describeAnswer } from './http.js';
import { effectFigures, failed, passed, skipped, times, type CheckRun } from './outcome.js';
import { providerListExpectations } from './provider-list.js';
import type { Delivery, Expectation } from './session.js';

const answersText = (d: Delivery): string => d.answers.map(describeAnswer).join(', ');

export const sameResource: CheckRun = async (s) => {
  const invoiceId = s.newInvoiceId();
  const at = Date.now();
  const confirming = s.event(invoiceId, 'confirming', new Date(at - 1000));
  const paid = s.event(invoiceId, 'paid', new Date(at));
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'same-resource' });
  const first = await s.deliver(confirming);
  // Give a receiver that queues the time to apply the first event before the second arrives.
  await s.sleep(s.options.settleMs);
  const second = await s.deliver(paid);
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1 && (x.state === undefined || x.state === 'paid'));
  const figures = { confirming: answersText(first), paid: answersText(second), ...effectFigures(effect) };
  if (!first.ok || !second.ok) return failed(`an event was never answered 2xx (confirming: ${answersText(first)}; paid: ${answersText(second)})`, figures);
  if (effect.count === 0) {
    return failed(
      `invoice.paid (a new event id) for an invoice that already had invoice.confirming had no effect${effect.state === undefined ? '' : ` and the invoice stayed ${effect.state}`}: the receiver deduplicates on the resource id (the invoice id) instead of the event id`,
      figures,
    );
  }
  if (effect.count > 1) return failed(`the paid effect ${times(effect.count)} for one invoice.paid`, figures);
  if (effect.state !== undefined && effect.state !== 'paid') return failed(`both events were answered, but the invoice ended ${effect.state}, not paid`, figures);
  return passed(`both events processed; ${effect.state === undefined ? '' : `state ${effect.state}; `}the effect ran once`, figures);
};

export const order: CheckRun = async (s) => {
  const invoiceId = s.newInvoiceId();
  const at = Date.now();
  const paid = s.event(invoiceId, 'paid', new Date(at));
  // It happened before the payment but arrives after it, as a provider's retry of an old event does.
  const lateConfirming = s.event(invoiceId, 'confirming', new Date(at - 60_000));
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'order' });
  const first = await s.deliver(paid);
  await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const late = await s.deliver(lateConfirming);
  await s.sleep(s.options.settleMs);
  const effect = await s.effectOf(invoiceId);
  const figures = { paid: answersText(first), late_confirming: answersText(late), ...effectFigures(effect) };
  if (effect.state === undefined) return skipped('the effects report no state for the invoice, so its order cannot be observed', figures);
  if (effect.state !== 'paid') {
    return failed(
      `a late invoice.confirming moved the invoice from paid back to ${effect.state}: the receiver applies events in arrival order; compare with the current state and ignore an event that would move it back`,
      figures,
    );
  }
  if (effect.count !== 1) return failed(`the paid effect ${times(effect.count)}`, figures);
  if (!first.ok || !late.ok) return failed(`an event was never answered 2xx (paid: ${answersText(first)}; late confirming: ${answersText(late)})`, figures);
  return passed('the late event was answered 2xx and ignored; state stays paid', figures);
};

export const crash: CheckRun = async (s) => {
  const { controlUrl, providerTimeoutMs } = s.options;
  if (controlUrl === undefined) return skipped('needs --control (fail-next): without it prove cannot make a run fail mid-work');
  await callControl(controlUrl, 'fail-next', providerTimeoutMs);
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'crash' });
  const delivery = await s.deliver(e);
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const figures = { answers: answersText(delivery), ...effectFigures(effect) };
  if (!delivery.ok) return failed(`the event was never answered 2xx after the failed run (${answersText(delivery)}): the receiver keeps failing after one crash`, figures);
  if (effect.count === 0) {
    return failed(
      `after a run that failed mid-work and its retry (${answersText(delivery)}), the effect never ran: the receiver marks the event processed before its work commits, so the retry skips the work`,
      figures,
    );
  }
  if (effect.count > 1) return failed(`after a run that failed mid-work, the effect ${times(effect.count)}: the failed run's work was not rolled back`, figures);
  const how = delivery.answers.length > 1 ? `answered ${answersText(delivery)}` : `answered ${answersText(delivery)} and retried by itself`;
  return passed(`the failed run was ${how}; exactly one effect`, figures);
};

export const reconcile: CheckRun = async (s) => {
  const list = s.options.providerList;
  const listed = list ? await providerListExpectations(list, s.options.providerTimeoutMs) : new Map<string, Expectation>();
  const expectations = new Map([...listed, ...s.expectations]);
  if (expectations.size === 0) return skipped(list ? 'no events were sent and the provider lists nothing' : 'no events were sent: choose at least one other check');
  await s.sleep(s.options.settleMs);
  // Thousands of listed resources do not fit in one ?ids= query: read every effect once instead.
  const effects = await s.effects(listed.size > 0 ? undefined : [...expectations.keys()]);
  const mismatches: string[] = [];
  for (const [invoiceId, want] of expectations) {
    const got = effects.get(invoiceId) ?? { count: 0 };
    const stateWrong = want.state !== undefined && got.state !== undefined && got.state !== want.state;
    if (got.count !== want.count || stateWrong) {
      const expected = want.count === 0 ? 'no effect' : `once${want.state ? ` in ${want.state}` : ''}`;
      mismatches.push(`${invoiceId} (${want.check}) ${times(got.count)}${got.state ? `, state ${got.state}` : ''}; expected ${expected}`);
    }
  }
  const figures = { resources: expectations.size, ...(list ? { listed: listed.size } : {}), matching: expectations.size - mismatches.length, differing: mismatches.length };
  const what = list ? 'what was sent and what the provider lists' : 'what was sent';
  if (mismatches.length) {
    const shown = mismatches.slice(0, 5).join('; ');
    return failed(`${mismatches.length} of ${expectations.size} resources differ from ${what}: ${shown}${mismatches.length > 5 ? '; …' : ''}`, figures);
  }
  return passed(`all ${expectations.size} resources match ${what}: each effect once, in its last state`, figures);
};
