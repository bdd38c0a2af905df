// Writes the map of src/ in docs/architecture.md (between its `layers` markers) from the rooms in
// .dependency-cruiser.cjs, the rules `npm run lint:deps` checks. `npm run docs:layers` writes it;
// with --check it only compares, and fails when the checked-in map is not what the rules say.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

interface LayerRule {
  name: string;
  comment: string;
  from: { path: string };
  to: { pathNot: string[] };
}

const BEGIN = '<!-- layers:begin (written by `npm run docs:layers` from .dependency-cruiser.cjs; edit the rooms there) -->';
const END = '<!-- layers:end -->';
const LABEL_WIDTH = 28;
const LINE_WIDTH = 112;

const config = createRequire(import.meta.url)('../.dependency-cruiser.cjs') as { forbidden: LayerRule[] };
const layers = config.forbidden.filter((r) => r.name.startsWith('layer-'));
const labelOf = new Map(layers.map((r) => [r.from.path, r.comment.split(' | ')[0]!]));

/** Wraps words into lines of at most `width`, the first after `first`, the rest indented under it. */
function wrap(first: string, text: string): string[] {
  const lines: string[] = [];
  let line = first.padEnd(LABEL_WIDTH);
  for (const word of text.split(' ')) {
    if (line.trim() !== first.trim() && line.length + 1 + word.length > LINE_WIDTH) {
      lines.push(line.trimEnd());
      line = ' '.repeat(LABEL_WIDTH);
    }
    line += line.endsWith(' ') ? word : ` ${word}`;
  }
  lines.push(line.trimEnd());
  return lines;
}

export function renderLayers(): string {
  const out: string[] = [];
  layers.forEach((rule, i) => {
    const [label, ...says] = rule.comment.split(' | ');
    const uses = rule.to.pathNot.filter((p) => p !== rule.from.path).map((p) => labelOf.get(p) ?? p);
    says.forEach((line, j) => out.push(...wrap(j === 0 ? label! : '', line)));
    const below = layers.slice(i + 1).map((r) => labelOf.get(r.from.path));
    const all = below.length > 0 && below.every((l) => uses.includes(l!));
    out.push(...wrap('', `uses: ${uses.length === 0 ? 'nothing of src/' : all ? 'every room below' : uses.join(', ')}`));
  });
  return ['```text', ...out, '```'].join('\n');
}

const docUrl = new URL('../docs/architecture.md', import.meta.url);
const doc = readFileSync(docUrl, 'utf8');
const start = doc.indexOf(BEGIN);
const end = doc.indexOf(END);
if (start < 0 || end < start) {
  process.stderr.write(`docs/architecture.md: the markers ${BEGIN} … ${END} are missing\n`);
  process.exit(1);
}
const next = `${doc.slice(0, start + BEGIN.length)}\n${renderLayers()}\n${doc.slice(end)}`;
if (process.argv.includes('--check')) {
  if (next !== doc) {
    process.stderr.write('docs/architecture.md: the map of src/ is not what .dependency-cruiser.cjs says; run `npm run docs:layers`\n');
    process.exit(1);
  }
  process.stdout.write('docs/architecture.md: the map of src/ matches .dependency-cruiser.cjs\n');
} else {
  writeFileSync(docUrl, next);
  process.stdout.write('wrote the map of src/ in docs/architecture.md\n');
}
