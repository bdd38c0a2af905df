import { defineStatement, type NoParams } from '../statement.js';

export type FindingKind = 'missing' | 'unprocessed' | 'state' | 'extra';
export const findingKinds: readonly FindingKind[] = ['missing', 'unprocessed', 'state', 'extra'];
export type FindingAction = 'none' | 'recorded' | 'listed' | 'redelivered';

export interface FindingRow {
  id: string;
  run_id: string;
  source: string;
  kind: FindingKind;
  resource_id: string | null;
  event_id: string | null;
  provider_state: string | null;
  tekil_state: string | null;
  action: FindingAction;
  detail: string | null;
  created_at: Date;
}

/** A page's findings in one statement (arrays, one text for any count). */
export const insertFindings = defineStatement<
  {
    runId: string;
    source: string;
    kinds: string[];
    resourceIds: Array<string | null>;
    eventIds: Array<string | null>;
    providerStates: Array<string | null>;
    tekilStates: Array<string | null>;
    actions: string[];
    details: Array<string | null>;
  },
  never
>(
  'reconcile_insert_findings',
  `INSERT INTO reconcile_findings (run_id, source, kind, resource_id, event_id, provider_state, tekil_state, action, detail)
   SELECT $runId::bigint, $source, f.kind, f.resource_id, f.event_id, f.provider_state, f.tekil_state, f.action, f.detail
   FROM unnest($kinds::text[], $resourceIds::text[], $eventIds::text[], $providerStates::text[], $tekilStates::text[],
               $actions::text[], $details::text[])
     WITH ORDINALITY AS f(kind, resource_id, event_id, provider_state, tekil_state, action, detail, n)
   ORDER BY f.n`,
);

/** Newest first, keyset-paged by id; every filter optional. */
export const listFindings = defineStatement<
  { source: string | null; kind: string | null; runId: string | null; beforeId: string | null; limit: number },
  FindingRow
>(
  'reconcile_list_findings',
  `SELECT * FROM reconcile_findings
   WHERE ($source::text IS NULL OR source = $source) AND ($kind::text IS NULL OR kind = $kind)
     AND ($runId::bigint IS NULL OR run_id = $runId::bigint) AND ($beforeId::bigint IS NULL OR id < $beforeId::bigint)
   ORDER BY id DESC LIMIT $limit`,
);

/** Every finding ever stored, by source and kind: what `tekil_reconcile_findings_total` reports. */
export const countFindings = defineStatement<NoParams, { source: string; kind: string; n: number }>(
  'reconcile_count_findings',
  `SELECT source, kind, count(*)::int AS n FROM reconcile_findings GROUP BY source, kind`,
);
