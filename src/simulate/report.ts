import type { SimulationSummary } from './run.js';

const list = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

/** The run in a few lines a person reads: what was sent, what went wrong on purpose, how it ended. */
export function formatSummary(s: SimulationSummary): string {
  const lines = [
    `run ${s.runId}: ${s.invoices} invoices in ${(s.durationMs / 1000).toFixed(1)} s`,
    `  event ids: ${s.eventIds === 'delivery' ? 'one per delivery (each URL its own)' : "the message's (the same at every URL)"}`,
    `  paths: ${list(s.paths)}`,
    `  final states announced: ${list(s.finalStatuses)}`,
    `  events published: ${s.eventsPublished} (${s.reordered} invoices sent latest first), replayed by hand: ${s.replayed}`,
    `  secret rotated halfway: ${s.rotatedSecret ? 'yes (two signatures since)' : 'no'}`,
  ];
  for (const [name, d] of Object.entries(s.deliveries)) lines.push(`  deliveries ${name}: ${d.deliveries} after ${d.attempts} attempts`);
  for (const [name, p] of Object.entries(s.proxies)) {
    lines.push(
      `  ${name}: ${p.requests} requests, ${p.forwarded} reached the receiver; dropped answers ${p.dropped}, delayed past the timeout ${p.delayed}, duplicated ${p.duplicated}; answers ${list(p.answers)}; slowest ${p.slowestAnswerMs} ms`,
    );
  }
  return `${lines.join('\n')}\n`;
}
