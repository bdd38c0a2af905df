import type { CheckResult, Figures } from './checks.js';
import type { ProveReport } from './run.js';

const colours = { passed: '\x1b[32m', failed: '\x1b[31m', skipped: '\x1b[33m' } as const;
const reset = '\x1b[0m';
const dim = '\x1b[2m';

export function figuresText(figures: Figures): string {
  return Object.entries(figures)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('|') : String(v)}`)
    .join(' ');
}

/** One row as the terminal shows it: status, id, what happened; on a failure, how to fix it. */
export function formatRow(row: CheckResult, colour: boolean): string {
  const label = row.status.toUpperCase().padEnd(7);
  const status = colour ? `${colours[row.status]}${label}${reset}` : label;
  const lines = [`${status} ${row.id.padEnd(16)} ${row.message}`];
  const figures = figuresText(row.figures);
  if (figures) lines.push(`${' '.repeat(25)}${colour ? dim : ''}${figures}${colour ? reset : ''}`);
  if (row.status === 'failed') lines.push(`${' '.repeat(25)}fix: ${row.fix}`);
  return lines.join('\n');
}

export function formatSummary(report: ProveReport, colour: boolean): string {
  const { passed, failed, skipped } = report.counts;
  const verdict = report.ok ? 'PROVED' : 'NOT PROVED';
  const painted = colour ? `${report.ok ? colours.passed : colours.failed}${verdict}${reset}` : verdict;
  return `${painted}: ${passed} passed, ${failed} failed, ${skipped} skipped in ${(report.durationMs / 1000).toFixed(1)} s (${report.scheme} → ${report.url}, run ${report.runId})`;
}

export function formatTable(report: ProveReport, colour: boolean): string {
  return `${report.rows.map((r) => formatRow(r, colour)).join('\n')}\n\n${formatSummary(report, colour)}\n`;
}

const xml = (text: string): string =>
  text
    .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string)
    // XML 1.0 cannot carry most control characters, even escaped.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');

/** JUnit XML for CI: one testcase per row; a failed row is a <failure>, a skipped one <skipped>. */
export function formatJunit(report: ProveReport): string {
  const cases = report.rows.map((row) => {
    const head = `    <testcase classname="tekil.prove" name="${xml(row.id)}" time="${(row.durationMs / 1000).toFixed(3)}">`;
    const out = `      <system-out>${xml(`${row.title}\n${row.message}\n${figuresText(row.figures)}`)}</system-out>`;
    let verdict = '';
    if (row.status === 'failed')
      verdict = `      <failure message="${xml(row.message)}" type="${xml(row.id)}">${xml(`${row.message}\nfix: ${row.fix}`)}</failure>\n`;
    if (row.status === 'skipped') verdict = `      <skipped message="${xml(row.message)}"/>\n`;
    return `${head}\n${verdict}${out}\n    </testcase>`;
  });
  const { passed, failed, skipped } = report.counts;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="tekil prove" tests="${passed + failed + skipped}" failures="${failed}" skipped="${skipped}" time="${(report.durationMs / 1000).toFixed(3)}">`,
    `  <testsuite name="tekil prove ${xml(report.url)}" tests="${passed + failed + skipped}" failures="${failed}" skipped="${skipped}" timestamp="${report.startedAt}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
