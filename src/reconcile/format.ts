import { parseDuration } from '../config/units.js';
import { TekilError } from '../errors.js';
import { findingKinds, type FindingRow } from '../store/sql/reconcile/findings.js';
import type { ReconcileReport } from './run.js';

/** `--since` / `--until`: an ISO time (`2026-11-28T00:00Z`), or a duration back from now (`72h`). */
export function parseWindowTime(flag: string, value: string, now = Date.now()): Date {
  const back = /^\d/.test(value) && !value.includes('-') ? parseDuration(value) : undefined;
  if (back !== undefined) return new Date(now - back);
  const at = Date.parse(value);
  if (Number.isNaN(at))
    throw new TekilError('VALIDATION_FAILED', `${flag}: expected an ISO time (2026-11-28T00:00Z) or a duration back from now (72h), got "${value}"`);
  return new Date(at);
}

const cell = (v: string | null, width: number) => (v ?? '-').slice(0, width).padEnd(width);

/** The findings as an operator reads them: a count per kind, then one line each. */
export function formatFindingsTable(findings: readonly FindingRow[]): string {
  const lines = [`${cell('kind', 12)}${cell('resource', 24)}${cell('event id', 40)}${cell('provider', 18)}${cell('tekil', 18)}${cell('action', 12)}detail`];
  for (const f of findings) {
    lines.push(
      `${cell(f.kind, 12)}${cell(f.resource_id, 24)}${cell(f.event_id, 40)}${cell(f.provider_state, 18)}${cell(f.tekil_state, 18)}${cell(f.action, 12)}${f.detail ?? ''}`.trimEnd(),
    );
  }
  return lines.join('\n');
}

export function formatReport(report: ReconcileReport): string {
  const { run, counts, findings } = report;
  const head = [
    `run ${run.id} (${run.source}, ${run.provider}) ${run.status}: ${run.items} items on ${run.pages} pages, window ${run.window_start.toISOString()} .. ${run.window_end?.toISOString() ?? 'now'}${run.resumed ? `, resumed ${run.resumed}×` : ''}`,
    findingKinds.map((k) => `${k} ${counts[k]}`).join('  '),
  ];
  if (findings.length === 0) return `${head.join('\n')}\nno differences\n`;
  const tail = run.apply ? '' : '\nnothing was changed: run again with --apply to record missing and state items';
  // By kind, in the order of the counts line; within a kind, as found.
  const byKind = [...findings].sort((a, b) => findingKinds.indexOf(a.kind) - findingKinds.indexOf(b.kind));
  return `${head.join('\n')}\n\n${formatFindingsTable(byKind)}\n${tail}\n`;
}
