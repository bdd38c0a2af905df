import { callControl, describeAnswer } from './http.js';
import { effectFigures, failed, passed, skipped, times, type CheckRun } from './outcome.js';
import { providerListExpectations } from './provider-list.js';
import type { Delivery, Expectation } from './session.js';

const answersText = (d: Delivery): string => d.answers.map(describeAnswer).join(', ');
const nowSeconds = () => Math.floor(Date.now() / 1000);

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
  if (effect.state !== undefined && effect.state !== 'paid')
    return failed(`both events were answered, but the invoice ended ${effect.state}, not paid`, figures);
  return passed(`both events processed; ${effect.state === undefined ? '' : `state ${effect.state}; `}the effect ran once`, figures);
};

export const paidAgain: CheckRun = async (s) => {
  const invoiceId = s.newInvoiceId();
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'paid-again' });
  const first = await s.deliver(s.event(invoiceId, 'paid'));
  await s.settledEffect(invoiceId, (x) => x.count >= 1);
  // The same payment announced again under a fresh event id: the event id lock lets it through, so
  // only the conditional update ("mark paid only if not yet paid") keeps it from a second effect.
  const again = await s.deliver(s.event(invoiceId, 'paid'));
  const effect = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  const figures = { first: answersText(first), again: answersText(again), ...effectFigures(effect) };
  if (!first.ok || !again.ok)
    return failed(
      `an event was never answered 2xx (first: ${answersText(first)}; again: ${answersText(again)}): a second invoice.paid must be answered 2xx and change nothing`,
      figures,
    );
  if (effect.count > 1) {
    return failed(
      `invoice.paid under a new event id for an invoice already paid ${times(effect.count)}: the receiver has no second lock; mark the invoice paid only if it is not paid yet, and run the effect only when that update changed a row`,
      figures,
    );
  }
  if (effect.count === 0) return failed('the effect never ran', figures);
  if (effect.state !== undefined && effect.state !== 'paid') return failed(`the invoice ended ${effect.state}, not paid`, figures);
  return passed('the second invoice.paid was answered 2xx and changed nothing; the effect ran once', figures);
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
  if (!delivery.ok)
    return failed(`the event was never answered 2xx after the failed run (${answersText(delivery)}): the receiver keeps failing after one crash`, figures);
  if (effect.count === 0) {
    return failed(
      `after a run that failed mid-work and its retry (${answersText(delivery)}), the effect never ran: the receiver marks the event processed before its work commits, so the retry skips the work`,
      figures,
    );
  }
  if (effect.count > 1)
    return failed(`after a run that failed mid-work, the effect ${times(effect.count)}: the failed run's work was not rolled back`, figures);
  const how = delivery.answers.length > 1 ? `answered ${answersText(delivery)}` : `answered ${answersText(delivery)} and retried by itself`;
  return passed(`the failed run was ${how}; exactly one effect`, figures);
};

export const replayAfterFix: CheckRun = async (s) => {
  const { controlUrl, providerTimeoutMs } = s.options;
  if (controlUrl === undefined) return skipped('needs --control (fail-next): without it prove cannot make an event fail');
  await callControl(controlUrl, 'fail-next', providerTimeoutMs);
  const invoiceId = s.newInvoiceId();
  const e = s.event(invoiceId, 'paid');
  s.expect(invoiceId, { count: 1, state: 'paid', check: 'replay-after-fix' });
  // The provider's last attempt fails; it marks the event failed and sends it no more.
  const lastAttempt = await s.send(e);
  await s.sleep(s.options.settleMs);
  // After the fix, an operator replays it by hand: the same event id, a fresh signature.
  const replay = await s.deliver(e, { timestamp: nowSeconds() + 1 });
  const afterReplay = await s.settledEffect(invoiceId, (x) => x.count >= 1);
  // And once more, as a bulk replay that takes it in again (or the provider's own late retry) does.
  const second = await s.deliver(e, { timestamp: nowSeconds() + 2 });
  await s.sleep(s.options.settleMs);
  const effect = await s.effectOf(invoiceId);
  const figures = {
    last_attempt: describeAnswer(lastAttempt),
    replay: answersText(replay),
    second_replay: answersText(second),
    count_after_replay: afterReplay.count,
    ...effectFigures(effect),
  };
  if (!replay.ok || !second.ok)
    return failed(`a replay was never answered 2xx (replay: ${answersText(replay)}; second replay: ${answersText(second)})`, figures);
  if (afterReplay.count === 0) {
    return failed(
      `the event that failed (${describeAnswer(lastAttempt)}) was replayed after the fix and answered ${answersText(replay)}, but its effect never ran: the failed run left the event id marked processed, so the replay was taken for a duplicate; mark it in the work's transaction`,
      figures,
    );
  }
  if (effect.count > 1)
    return failed(
      `replaying the event a second time, with the same event id, the effect ${times(effect.count)}: a replay carries the event id of the original; deduplicate on it`,
      figures,
    );
  if (effect.state !== undefined && effect.state !== 'paid') return failed(`the invoice ended ${effect.state}, not paid`, figures);
  return passed(
    `the failed event (${describeAnswer(lastAttempt)}) was replayed (${answersText(replay)}) and replayed again (${answersText(second)}); the effect ran once`,
    figures,
  );
};

export const reconcile: CheckRun = async (s) => {
  const list = s.options.providerList;
  const listed = list ? await providerListExpectations(list, s.options.providerTimeoutMs) : new Map<string, Expectation>();
  const expectations = new Map([...listed, ...s.expectations]);
  if (expectations.size === 0)
    return skipped(list ? 'no events were sent and the provider lists nothing' : 'no events were sent: choose at least one other check');
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
  const figures = {
    resources: expectations.size,
    ...(list ? { listed: listed.size } : {}),
    matching: expectations.size - mismatches.length,
    differing: mismatches.length,
  };
  const what = list ? 'what was sent and what the provider lists' : 'what was sent';
  if (mismatches.length) {
    const shown = mismatches.slice(0, 5).join('; ');
    return failed(`${mismatches.length} of ${expectations.size} resources differ from ${what}: ${shown}${mismatches.length > 5 ? '; …' : ''}`, figures);
  }
  return passed(`all ${expectations.size} resources match ${what}: each effect once, in its last state`, figures);
};
