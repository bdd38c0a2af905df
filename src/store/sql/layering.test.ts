import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const sqlDir = dirname(fileURLToPath(import.meta.url));
const srcDir = resolve(sqlDir, '../..');
/** What a statement module may import from outside src/store: the error catalogue only. */
const ALLOWED_OUTSIDE_STORE = new Set(['errors.ts']);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

describe('statement modules', () => {
  it('import nothing from the domains they serve: types flow downward', () => {
    const upward: string[] = [];
    for (const file of files(sqlDir)) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = relative(srcDir, resolve(dirname(file), spec!)).replace(/\.js$/, '.ts');
        if (!target.startsWith('store/') && !ALLOWED_OUTSIDE_STORE.has(target)) upward.push(`${relative(srcDir, file)} → ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('hold no positional parameter: every statement is bound by name', () => {
    const positional = files(sqlDir)
      .filter((f) => !f.endsWith('statement.ts'))
      .filter((f) => /\$[0-9]/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(srcDir, f));
    expect(positional).toEqual([]);
  });

  it('sit in the areas the layer rules and docs/architecture.md name, one per room', () => {
    const areas = readdirSync(sqlDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => `${e.name}/`);
    const rules = readFileSync(resolve(srcDir, '../.dependency-cruiser.cjs'), 'utf8');
    const sqlLine = rules.split('\n').find((line) => line.includes("'sql/: every statement")) ?? '';
    const doc = readFileSync(resolve(srcDir, '../docs/architecture.md'), 'utf8');
    const docAreas = doc.slice(doc.indexOf('**Areas are rooms.**'), doc.indexOf('**A caller'));
    expect(areas.filter((a) => !sqlLine.includes(a))).toEqual([]);
    expect(areas.filter((a) => !docAreas.includes(`\`${a}\``))).toEqual([]);
  });
});
