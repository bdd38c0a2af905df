import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { TekilError } from '../errors.js';
import { describeZodIssues } from '../validation.js';
import { configSchema, type ConfigInput, type TekilConfig } from './schema.js';

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string of the parsed document. Interpolating
 * after parsing means a secret containing YAML syntax cannot change the document's shape.
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path: string[] = []): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      throw new TekilError('CONFIG_INVALID', `${path.join('.') || '(root)'}: environment variable ${name} is not set`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateEnv(v, env, [...path, String(i)]));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateEnv(v, env, [...path, k])]));
  }
  return value;
}

/** Validates an already-parsed configuration object (for tests and the library API). */
export function parseConfig(input: unknown, env: NodeJS.ProcessEnv = process.env): TekilConfig {
  const interpolated = interpolateEnv(input ?? {}, env);
  const result = configSchema.safeParse(interpolated);
  if (!result.success) throw new TekilError('CONFIG_INVALID', `invalid configuration:\n${describeZodIssues(result.error, '(root)', '\n')}`);
  return result.data;
}

export function defineConfig(input: ConfigInput): ConfigInput {
  return input;
}

export async function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Promise<TekilConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new TekilError('CONFIG_NOT_FOUND', `cannot read configuration file ${path}: ${(err as Error).message}`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new TekilError('CONFIG_INVALID', `${path}: not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  try {
    return parseConfig(doc, env);
  } catch (err) {
    if (err instanceof TekilError) throw new TekilError(err.code, `${path}: ${err.message}`, { cause: err });
    throw err;
  }
}
