import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfigFile, parseConfig } from '../config/load.js';
import type { TekilConfig } from '../config/schema.js';
import { TekilError } from '../errors.js';
import { hmacSchemeOptions, type HmacSchemeOptions } from '../signing/index.js';
import { describeZodIssues } from '../validation.js';

export const DEFAULT_CONFIG_PATH = 'tekil.yaml';

export function addConfigOption(cmd: Command): Command {
  return cmd.option('-c, --config <path>', `configuration file (default: ${DEFAULT_CONFIG_PATH} when present)`);
}

/** Loads --config, or tekil.yaml when present; with neither, an empty configuration (no sources). */
export async function loadCliConfig(path: string | undefined): Promise<{ config: TekilConfig; path?: string }> {
  if (path) return { config: await loadConfigFile(path), path };
  if (existsSync(DEFAULT_CONFIG_PATH)) return { config: await loadConfigFile(DEFAULT_CONFIG_PATH), path: DEFAULT_CONFIG_PATH };
  return { config: parseConfig({}) };
}

export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new TekilError('CONFIG_INVALID', `--port: expected 0..65535, got "${value}"`);
  return n;
}

/** `--hmac '{"signature_header": …}'`: the generic scheme's options as JSON, validated like the config's. */
export function parseHmacOption(text: string): HmacSchemeOptions {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', '--hmac: expected a JSON object of hmac options', { cause: err });
  }
  const parsed = hmacSchemeOptions.safeParse(raw);
  if (!parsed.success) {
    throw new TekilError('VALIDATION_FAILED', `--hmac: ${describeZodIssues(parsed.error)}`);
  }
  return parsed.data;
}
