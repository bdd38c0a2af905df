// @ts-check
// A tenant's own settings on the Tenants page (docs/tenants.md, "A tenant's own settings"): defaults
// for its endpoints (an endpoint's own value wins; an empty field clears the default, so the file's
// applies), its cap on requests in flight across its endpoints and its weight in the claims.

import { api, el, wordsOf } from './lib.js';

const { t, word } = wordsOf('tenants');

/** @typedef {{ id: string, ladder: string | string[] | null, timeout_ms: number | null, rate_limit: string | null, endpoint_max_in_flight: number | null, event_id: string | null, max_in_flight: number | null, weight: number }} TenantSettings */

/** `paymos` names a preset; `30s,2m,1h` lists gaps; empty clears it. @param {string} text */
const ladderOf = (text) => (text === '' ? null : /^\d/.test(text) ? text.split(',').map((g) => g.trim()) : text);
/** @param {string} text */
const numberOf = (text) => (text === '' ? null : Number(text));

/**
 * Shows the tenant's settings in `place` as a form; saving sends the fields as a PATCH (an empty one
 * clears that default) and says what happened.
 * @param {string} tenantId
 * @param {HTMLElement} place
 */
export async function editTenantSettings(tenantId, place) {
  /** @type {TenantSettings} */
  const tenant = await api('GET', `/tenants/${encodeURIComponent(tenantId)}`);
  /** @param {string} name @param {string} value @param {string} [type] */
  const input = (name, value, type = 'text') => el('input', { name, value, type, id: `tenant-setting-${name}` });
  const fields = {
    ladder: input('ladder', tenant.ladder === null ? '' : Array.isArray(tenant.ladder) ? tenant.ladder.join(',') : tenant.ladder),
    timeout: input('timeout', tenant.timeout_ms === null ? '' : `${tenant.timeout_ms}ms`),
    rate_limit: input('rate_limit', tenant.rate_limit ?? ''),
    endpoint_max_in_flight: input('endpoint_max_in_flight', tenant.endpoint_max_in_flight === null ? '' : String(tenant.endpoint_max_in_flight), 'number'),
    event_id: el(
      'select',
      { name: 'event_id', id: 'tenant-setting-event_id' },
      ['', 'message', 'delivery'].map((v) => el('option', { value: v }, v)),
    ),
    max_in_flight: input('max_in_flight', tenant.max_in_flight === null ? '' : String(tenant.max_in_flight), 'number'),
    weight: input('weight', String(tenant.weight), 'number'),
  };
  fields.event_id.value = tenant.event_id ?? '';
  const status = el('span', { className: 'note' });
  const form = el(
    'form',
    {
      id: 'tenant-settings',
      dataset: { tenant: tenantId },
      on: {
        submit: (event) => {
          event.preventDefault();
          const body = {
            ladder: ladderOf(fields.ladder.value.trim()),
            timeout: fields.timeout.value.trim() === '' ? null : fields.timeout.value.trim(),
            rate_limit: fields.rate_limit.value.trim() === '' ? null : fields.rate_limit.value.trim(),
            endpoint_max_in_flight: numberOf(fields.endpoint_max_in_flight.value),
            event_id: fields.event_id.value === '' ? null : fields.event_id.value,
            max_in_flight: numberOf(fields.max_in_flight.value),
            weight: Number(fields.weight.value || 1),
          };
          api('PATCH', `/tenants/${encodeURIComponent(tenantId)}`, body).then(
            () => status.replaceChildren(word('span', 'settingsSaved')),
            (err) => status.replaceChildren(el('span', { className: 'error' }, err instanceof Error ? err.message : String(err))),
          );
        },
      },
    },
    el('h2', {}, `${String(t('settingsOf'))} ${tenantId}`),
    word('p', 'settingsHelp', { className: 'note' }),
    ...Object.entries(fields).map(([name, field]) => el('label', {}, word('span', /** @type {never} */ (`setting_${name}`)), field)),
    word('button', 'save', { type: 'submit' }),
    status,
  );
  place.replaceChildren(form);
}
