/**
 * The scorecard's rows. Ids are stable (CI jobs and `--only` / `--skip` name them); each row carries
 * one sentence on what its failure means in the receiver's code and how to fix it.
 */
export const checkIds = [
  'deliver',
  'duplicate',
  'concurrent',
  'busy-duplicate',
  'same-resource',
  'paid-again',
  'order',
  'signature',
  'timestamp',
  'rotation',
  'crash',
  'worker-killed',
  'replay-after-fix',
  'second-endpoint',
  'reconcile',
] as const;
export type CheckId = (typeof checkIds)[number];

export type CheckStatus = 'passed' | 'failed' | 'skipped';

/** Numbers and short texts a row reports: HTTP answers, effect counts, states, timings. */
export type Figures = Record<string, number | string | boolean | readonly (number | string)[]>;

export interface CheckResult {
  id: CheckId;
  title: string;
  status: CheckStatus;
  /** What was observed; on a failure it names the bug. */
  message: string;
  /** What a failure of this row means and how to fix it (the same sentence every run). */
  fix: string;
  figures: Figures;
  durationMs: number;
}

export const checkTitles: Record<CheckId, string> = {
  deliver: 'send invoice.paid once',
  duplicate: 'resend the same delivery (same id, fresh signature)',
  concurrent: 'copies of one delivery at once',
  'busy-duplicate': 'a copy while the first run is still working',
  'same-resource': 'invoice.confirming then invoice.paid for one invoice',
  'paid-again': 'invoice.paid again, under a new event id, for a paid invoice',
  order: 'invoice.paid then a late invoice.confirming',
  signature: 'a wrong signature; a body changed after signing',
  timestamp: 'a timestamp outside the tolerance, past and future',
  rotation: 'two v1 signatures, only the second valid',
  crash: 'a run that fails mid-work, then the retry',
  'worker-killed': 'the worker killed mid-job, then restarted (İşlem sırasında çalışanın öldürülmesi)',
  'replay-after-fix': 'an event that failed, replayed by hand after the fix',
  'second-endpoint': 'the same event id at a second URL',
  reconcile: 'every event sent, compared with the effects',
};

export const checkFixes: Record<CheckId, string> = {
  deliver:
    'A correctly signed event must be answered 2xx within the provider timeout and run its effect once: check the secret, the scheme and the route, and answer before slow work.',
  duplicate:
    'Providers resend deliveries: record the event id under a unique key in the same transaction as the effect, and answer 2xx without doing the work again when it is already there.',
  concurrent:
    'Copies arrive at the same moment: the duplicate check must be atomic with the effect (a unique key on the event id, inserted in the effect transaction), not a read before the work.',
  'busy-duplicate':
    'A provider that timed out resends while the first run still works: the copy must wait for or be refused by the first run (unique key on the event id inside the transaction), not start the work again.',
  'same-resource':
    'One invoice has many events: deduplicate on the event id, never on the resource (invoice) id, or the later states of a resource are dropped.',
  'paid-again':
    "A provider can announce a payment again under a new event id: make the update conditional (\"mark paid only if not yet paid\", e.g. UPDATE … SET status = 'paid' WHERE id = $1 AND status <> 'paid') and run the effect only when it changed a row: the second lock behind the event id.",
  order: "Events arrive out of order: compare each event with the resource's current state and ignore one that would move it back (a terminal state stays).",
  signature: 'Verify the signature over the raw body before anything else, with a constant-time comparison, and answer 4xx when it does not match.',
  timestamp: 'Check the signed timestamp against a tolerance (e.g. 5 minutes) on both sides, so a captured request cannot be replayed later.',
  rotation: 'During a secret rotation a header carries several signatures: accept the request when any of them matches any active secret, not only the first.',
  crash: 'Mark an event processed in the same transaction as its work: if the work fails, the mark rolls back with it and the retry does the work.',
  'worker-killed':
    "A worker can die in the middle of a job (a deploy, an out-of-memory kill): commit the work and the event's processed mark in one transaction, and let a job whose worker vanished come back (a lease, a retry), so it runs again exactly once.",
  'replay-after-fix':
    'A failed event is replayed by hand after the fix, with the same event id: a failed run must leave no "processed" mark (record it in the work\'s transaction), and a second replay must find the first one\'s mark and do nothing.',
  'second-endpoint': 'A provider may send the same event to a second URL (the callback URL): deduplicate on the event id across every URL of the receiver.',
  reconcile:
    "Every event the provider sent must end as exactly one effect in its last state: compare with the provider's list (reconciliation) and fix the rows above.",
};
