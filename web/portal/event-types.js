// @ts-check
// Event types: the provider's catalogue as this merchant's tenant is shown it (docs/event-types.md).
// Each type with its description, its JSON Schema and an example of its data; a deprecated type is
// marked. The same list feeds the event-type choices of the endpoint form (settings.js).

import { api, el, word } from './lib.js';

/** @typedef {import('../api-types').ApiAnswer<'GET /event-types'>['items'][number]} EventType */

/** The catalogue as shown to this tenant. @returns {Promise<EventType[]>} */
export async function loadEventTypes() {
  /** @type {import('../api-types').ApiAnswer<'GET /event-types'>} */
  const answer = await api('GET', '/event-types');
  return answer.items;
}

/** @param {unknown} value */
const json = (value) => el('pre', { className: 'json' }, JSON.stringify(value, null, 2));

/** @param {EventType} type */
function typeView(type) {
  return el(
    'article',
    { className: 'event-type', dataset: { type: type.name } },
    el('h2', {}, el('code', {}, type.name), type.deprecated ? word('span', 'deprecated', { className: 'badge deprecated' }) : null),
    type.description ? el('p', { className: 'description' }, type.description) : null,
    type.schema === null ? word('p', 'anyData', { className: 'muted' }) : el('details', { className: 'schema' }, word('summary', 'schema'), json(type.schema)),
    type.example === null || type.example === undefined
      ? null
      : el('details', { className: 'example', open: true }, word('summary', 'example'), json(type.example)),
  );
}

/** @type {import('./lib.js').Page} */
export const eventTypesPage = {
  id: 'event-types',
  nav: 'eventTypesPage',
  async show(section) {
    const types = await loadEventTypes();
    section.replaceChildren(
      word('h1', 'eventTypesPage'),
      word('p', 'eventTypesIntro', { className: 'muted' }),
      ...(types.length === 0 ? [word('p', 'noEventTypes')] : types.map(typeView)),
    );
  },
};
