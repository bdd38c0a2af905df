/**
 * Presets for `reconcile:`, for providers whose list API the generic adapter's defaults do not fit.
 * A preset fills in every key the source leaves out (`params` and `paths` key by key); what the
 * source sets wins. The preset never chooses `url` or `auth`: those are the merchant's own.
 */
const presets = {
  /**
   * MercanPay's invoice list: `GET …?status=paid&limit=100&before=<cursor>` → `{data: [...], next_before}`,
   * newest first, one status per call (paid and overpaid are two listings), no time filter.
   * Its webhooks are `{id, type, data: {invoice: {...}}}`, so synthetic deliveries are too.
   */
  mercanpay: {
    provider: 'generic',
    statuses: ['paid', 'overpaid'],
    one_status_per_call: true,
    type_prefix: 'invoice',
    envelope: 'mercanpay',
    params: { status: 'status', limit: 'limit', cursor: 'before', since: null, until: null },
    paths: { items: 'data', next_cursor: 'next_before', id: 'id', status: 'status', updated_at: 'updated_at' },
  },
} as const;

export const reconcilePresetNames = Object.keys(presets) as (keyof typeof presets)[];

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The source's `reconcile:` with its preset's keys under it; anything else is left for the schema to judge. */
export function withReconcilePreset(input: unknown): unknown {
  if (!isRecord(input) || input.preset === undefined) return input;
  // PayTR and iyzico are adapters of their own (a payment read back at a time), named by the preset too.
  if (input.preset === 'paytr' || input.preset === 'iyzico') {
    const { preset: provider, ...rest } = input;
    return { ...rest, provider };
  }
  const preset = (presets as Record<string, (typeof presets)[keyof typeof presets]>)[String(input.preset)];
  // An unknown preset still goes to the generic schema, whose `preset` key then names the choices.
  if (!preset) return { provider: 'generic', ...input };
  return {
    ...preset,
    ...input,
    params: { ...preset.params, ...(isRecord(input.params) ? input.params : {}) },
    paths: { ...preset.paths, ...(isRecord(input.paths) ? input.paths : {}) },
  };
}
