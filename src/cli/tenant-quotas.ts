import type { Command } from 'commander';
import { TekilError } from '../errors.js';
import { addApiOptions, callApi, resolveApiTarget, type ApiOptions } from './api-client.js';

const QUOTAS = ['endpoints', 'tokens', 'secrets', 'streams'] as const;
type QuotaFlags = ApiOptions & Partial<Record<(typeof QUOTAS)[number], string>>;

/** `--endpoints 200` sets the tenant's own value; `--endpoints none` removes it (the configured default applies). */
function quotaValue(name: string, text: string): number | null {
  if (text === 'none') return null;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n > 1_000_000) {
    throw new TekilError('VALIDATION_FAILED', `--${name} must be a whole number from 0 to 1000000, or none (got ${JSON.stringify(text)})`);
  }
  return n;
}

/**
 * `tekil tenants quotas <tenant>` (docs/tenants.md#quotas): without flags it shows what applies, the
 * tenant's own values and what it holds; with flags it sets (or, with `none`, removes) its own values,
 * for a provider whose plans differ.
 */
export function registerTenantQuotasCommand(tenants: Command): void {
  let cmd = addApiOptions(
    tenants.command('quotas <tenant>').description("Show a tenant's quotas, or set its own (a number) or remove them (none: the configured default)."),
  );
  for (const q of QUOTAS) cmd = cmd.option(`--${q} <n>`, `its own ${q} quota, or none`);
  cmd.action(async (tenant: string, flags: QuotaFlags) => {
    const body: Record<string, number | null> = {};
    for (const q of QUOTAS) {
      const text = flags[q];
      if (text !== undefined) body[q] = quotaValue(q, text);
    }
    const target = resolveApiTarget(flags);
    const path = `/api/v1/tenants/${encodeURIComponent(tenant)}/quotas`;
    const answer = Object.keys(body).length === 0 ? await callApi(target, 'GET', path) : await callApi(target, 'PATCH', path, body);
    process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  });
}
