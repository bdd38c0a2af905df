import type { Command } from 'commander';
import { request } from 'undici';
import { readStoredAdminToken } from '../auth/admin-token.js';
import { TekilError } from '../errors.js';

export interface ApiTarget {
  url: string;
  token: string;
}

export interface ApiOptions {
  url?: string;
  token?: string;
  dataDir?: string;
}

/** Adds --url and --token to an admin command. The admin CLI talks to a running tekil over HTTP. */
export function addApiOptions(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'tekil base URL (default: $TEKIL_URL or http://127.0.0.1:8787)')
    .option('--token <token>', 'admin token (default: $TEKIL_ADMIN_TOKEN, else the token tekil saved in its data dir)')
    .option('--data-dir <dir>', 'where to find the saved admin token (default: $TEKIL_DATA_DIR or ./.tekil)');
}

export function resolveApiTarget(opts: ApiOptions, env: NodeJS.ProcessEnv = process.env): ApiTarget {
  const url = (opts.url ?? env.TEKIL_URL ?? 'http://127.0.0.1:8787').replace(/\/$/, '');
  const token = opts.token ?? env.TEKIL_ADMIN_TOKEN ?? readStoredAdminToken(opts.dataDir ?? env.TEKIL_DATA_DIR ?? './.tekil');
  if (!token) {
    throw new TekilError('UNAUTHORIZED', 'no admin token', {
      hint: 'pass --token, set TEKIL_ADMIN_TOKEN, or run where tekil keeps its data dir (--data-dir)',
    });
  }
  return { url, token };
}

/**
 * A refusal from the admin API, keeping the server's error code, status and hint so the CLI can print
 * them (and a script using this client can branch on `code`). The code is the server's as sent: a newer
 * server may send one this CLI does not know.
 */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly hint: string | undefined;
  /** The call that was refused, e.g. `POST /api/v1/endpoints`. */
  readonly request: string;

  constructor(fields: { code: string; status: number; message: string; hint?: string | undefined; request: string }) {
    super(fields.message);
    this.name = 'ApiError';
    this.code = fields.code;
    this.status = fields.status;
    this.hint = fields.hint;
    this.request = fields.request;
  }
}

/** The error a failed answer stands for: the server's coded JSON, or its status and text when it sent none (a proxy's page). */
function apiErrorFrom(status: number, parsed: unknown, text: string, request: string): ApiError {
  const body = typeof parsed === 'object' && parsed !== null ? (parsed as { error?: unknown; message?: unknown; hint?: unknown }) : {};
  const code = typeof body.error === 'string' ? body.error : `HTTP_${status}`;
  const message = typeof body.message === 'string' ? body.message : text.trim().slice(0, 300) || `${request} answered HTTP ${status}`;
  return new ApiError({ code, status, message, hint: typeof body.hint === 'string' ? body.hint : undefined, request });
}

/** Calls the admin API; answers the parsed JSON (or text for non-JSON), throws ApiError for a refusal. */
export async function callApi<T = unknown>(
  target: ApiTarget,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  let res;
  try {
    res = await request(`${target.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (err) {
    throw new TekilError('SERVER_UNREACHABLE', `cannot reach tekil at ${target.url}: ${(err as Error).message}`, {
      cause: err,
      hint: 'is tekil running with the api role? pass --url or set TEKIL_URL',
    });
  }
  const text = await res.body.text();
  const isJson = (res.headers['content-type'] ?? '').toString().includes('json');
  let parsed: unknown = text;
  if (isJson && text) {
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      if (res.statusCode < 400) throw new TekilError('INTERNAL', `${method} ${path}: the answer is not valid JSON`, { cause: err });
    }
  }
  if (res.statusCode >= 400) throw apiErrorFrom(res.statusCode, parsed, text, `${method} ${path}`);
  return parsed as T;
}

/** Prints a value as JSON (for --json) or as aligned columns of the given fields. */
export function printRows(rows: Array<Record<string, unknown>>, fields: string[], asJson: boolean): void {
  if (asJson) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const cells = rows.map((r) => fields.map((f) => formatCell(r[f])));
  const widths = fields.map((f, i) => Math.max(f.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(fields), ...cells.map(line)].join('\n')}\n`);
}

function formatCell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
