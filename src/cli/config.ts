import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfigFile, parseConfig } from '../config/load.js';
import type { TekilConfig } from '../config/schema.js';
import { TekilError } from '../errors.js';

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
