import type { AlertFormat } from '../config/alerts.js';

import type { IncidentView } from './list.js';

/** An incident as messages carry it (the `data` of `incident.opened` and `incident.closed`): as the API shows it. */
export type IncidentMessage = IncidentView;

/** One line a person reads in a chat channel. */
export function incidentLine(incident: IncidentMessage): string {
  const head = incident.state === 'open' ? `tekil incident #${incident.id} opened` : `tekil incident #${incident.id} closed (recovered)`;
  return `${head}: ${incident.rule} ${incident.subject}: ${incident.summary}`;
}

/**
 * The body a chat tool's incoming webhook takes: Slack `{"text"}`, Discord `{"content"}` (at most 2,000
 * characters), Microsoft Teams a MessageCard (`{"@type": "MessageCard", "text"}`).
 */
export function chatBody(format: AlertFormat, incident: IncidentMessage): Uint8Array {
  const text = incidentLine(incident);
  const body =
    format === 'slack'
      ? { text }
      : format === 'discord'
        ? { content: text.slice(0, 2_000) }
        : {
            '@type': 'MessageCard',
            '@context': 'https://schema.org/extensions',
            summary: text.slice(0, 200),
            themeColor: incident.state === 'open' ? 'D13438' : '2EB67D',
            text,
          };
  return Buffer.from(JSON.stringify(body), 'utf8');
}
