import { describe, expect, it } from 'vitest';
import { checkFixes, checkIds, checkTitles, type CheckResult } from './checks.js';
import { formatJunit, formatRow, formatTable } from './report.js';
import { parseCheckList, type ProveReport } from './run.js';

const row = (over: Partial<CheckResult>): CheckResult => ({
  id: 'duplicate',
  title: checkTitles.duplicate,
  status: 'passed',
  message: 'ok',
  fix: checkFixes.duplicate,
  figures: {},
  durationMs: 1234,
  ...over,
});

const report = (rows: CheckResult[]): ProveReport => {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const r of rows) counts[r.status]++;
  return {
    url: 'http://x/hook',
    scheme: 'paymos',
    runId: 'abc123',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 5000,
    ok: counts.failed === 0,
    counts,
    rows,
  };
};

describe('prove report', () => {
  it('every check has a title and a fix sentence', () => {
    for (const id of checkIds) {
      expect(checkTitles[id]).toBeTruthy();
      expect(checkFixes[id]).toMatch(/\.$/);
    }
  });

  it('JUnit: a failure and a skipped element per row, XML special and control characters made safe', () => {
    const xml = formatJunit(
      report([
        row({ status: 'failed', message: 'ran 2 times <&> "quoted" \u0001', figures: { count: 2 } }),
        row({ id: 'crash', status: 'skipped', message: 'needs --control' }),
        row({ id: 'deliver' }),
      ]),
    );
    expect(xml).toContain('<testsuites name="tekil prove" tests="3" failures="1" skipped="1"');
    expect(xml).toContain('<failure message="ran 2 times &lt;&amp;&gt; &quot;quoted&quot; " type="duplicate">');
    expect(xml).toContain('<testcase classname="tekil.prove" name="crash" time="1.234">\n      <skipped message="needs --control"/>');
    expect(xml).not.toContain('\u0001');
  });

  it('the table shows the fix only for failed rows, and colour only when asked', () => {
    const failed = formatRow(row({ status: 'failed', message: 'ran twice', figures: { count: 2, first_answers: ['19× HTTP 200', '1× HTTP 503'] } }), false);
    expect(failed).toBe(
      `FAILED  duplicate        ran twice\n${' '.repeat(25)}count=2 first_answers=19× HTTP 200|1× HTTP 503\n${' '.repeat(25)}fix: ${checkFixes.duplicate}`,
    );
    expect(formatRow(row({}), false)).not.toContain('fix:');
    expect(formatRow(row({}), true)).toContain('\x1b[32mPASSED ');
    expect(formatTable(report([row({ status: 'failed' })]), false)).toMatch(
      /NOT PROVED: 0 passed, 1 failed, 0 skipped in 5\.0 s \(paymos → http:\/\/x\/hook, run abc123\)\n$/,
    );
  });

  it('check lists: known ids pass, unknown ones are named', () => {
    expect(parseCheckList('duplicate, order,', '--only')).toEqual(['duplicate', 'order']);
    expect(() => parseCheckList('duplicate,replay,crashh', '--skip')).toThrow('--skip: unknown check "replay", "crashh"');
  });
});
