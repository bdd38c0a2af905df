import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { schemeNames, type SchemeName } from '../signing/index.js';
import { TekilError } from '../errors.js';
import { parsePath, readPath } from '../json-path.js';
import { rawJsonValue } from '../raw-json.js';
import { createScheme, newDeliveryId } from '../signing/index.js';
import { parseSecretKey } from '../signing/ed25519.js';
import type { SignatureScheme } from '../signing/index.js';
import { addConfigOption, loadCliConfig, parseHmacOption } from './config.js';

type OutputFormat = 'headers' | 'curl' | 'json';

interface SignOptions {
  scheme?: SchemeName;
  secret: string[];
  signingKey: string[];
  namedSecret: string[];
  source?: string;
  config?: string;
  hmac?: string;
  id?: string;
  timestamp?: string;
  body: string;
  format: OutputFormat;
}

interface SigningSetup {
  scheme: SignatureScheme;
  secrets: string[];
  namedSecrets: Record<string, string>;
  /** Where the event id sits in a body (a source's `event_id`, else the scheme's defaults). */
  eventIdLocators: readonly string[];
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

async function readBody(path: string): Promise<Buffer> {
  try {
    if (path !== '-') return await readFile(path);
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', `--body: cannot read ${path === '-' ? 'standard input' : path}`, { cause: err });
  }
}

async function resolveSetup(opts: SignOptions): Promise<SigningSetup> {
  if (opts.source !== undefined) {
    if (opts.scheme !== undefined || opts.hmac !== undefined) {
      throw new TekilError('VALIDATION_FAILED', '--source takes the scheme from the configuration; leave out --scheme and --hmac');
    }
    const { config, path } = await loadCliConfig(opts.config);
    const source = config.sources[opts.source];
    if (!source) {
      const known = Object.keys(config.sources);
      throw new TekilError(
        'SOURCE_NOT_FOUND',
        `no source "${opts.source}" in ${path ?? 'the configuration'}${known.length ? ` (sources: ${known.join(', ')})` : ''}`,
      );
    }
    const scheme = createScheme(source.scheme, source.hmac);
    return {
      scheme,
      secrets: opts.secret.length ? opts.secret : source.secrets,
      namedSecrets: { ...source.named_secrets, ...parseNamedSecrets(opts.namedSecret) },
      eventIdLocators: (source.event_id ?? scheme.defaults.event_id).filter((l): l is string => typeof l === 'string'),
    };
  }
  if (opts.scheme === undefined) throw new TekilError('VALIDATION_FAILED', 'give --scheme (with --secret) or --source');
  if (opts.secret.length === 0 && !(opts.scheme === 'standard' && opts.signingKey.length > 0)) {
    throw new TekilError('VALIDATION_FAILED', '--scheme needs at least one --secret (standard: or a --signing-key)');
  }
  if (opts.scheme === 'hmac' && opts.hmac === undefined) {
    throw new TekilError('VALIDATION_FAILED', '--scheme hmac needs --hmac \'{"signature_header": …}\' (or use --source)');
  }
  const scheme = createScheme(opts.scheme, opts.hmac === undefined ? undefined : parseHmacOption(opts.hmac));
  return {
    scheme,
    secrets: opts.secret,
    namedSecrets: parseNamedSecrets(opts.namedSecret),
    eventIdLocators: scheme.defaults.event_id.filter((l): l is string => typeof l === 'string'),
  };
}

/** `--named-secret salt=…` (repeatable) → { salt: … }. */
export function parseNamedSecrets(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0 || !/^[A-Za-z0-9_]+$/.test(value.slice(0, eq))) throw new TekilError('VALIDATION_FAILED', `--named-secret: expected name=value, e.g. salt=…`);
    out[value.slice(0, eq)] = value.slice(eq + 1);
  }
  return out;
}

/** The event id the body already carries where the source looks for one, so the header agrees with it. */
function eventIdFromBody(body: Buffer, locators: readonly string[]): string | undefined {
  const paths = locators.filter((l) => l.startsWith('body:')).map((l) => parsePath(l.slice('body:'.length)));
  if (paths.length === 0) return undefined;
  const text = body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined; // not JSON: a fresh id is generated instead
  }
  for (const path of paths) {
    const value = readPath(json, path);
    if (typeof value === 'string' && value !== '') return value;
    // A number's id is its text as written, as the receiver reads it (no float round trip).
    if (typeof value === 'number') return rawJsonValue(text, path) ?? String(value);
  }
  return undefined;
}

function parseTimestampOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(value)) throw new TekilError('VALIDATION_FAILED', `--timestamp: expected unix seconds (digits only), got "${value}"`);
  return Number(value);
}

/**
 * One `-H` argument per header. A value made only of characters that survive the shell's word
 * splitting and globbing is printed bare as `Name:value`, so `$(tekil sign --format curl …)` can be
 * spliced into a curl command unquoted; anything else is single-quoted for copy-and-paste.
 */
export function curlArguments(headers: Record<string, string>): string {
  const SPLICE_SAFE = /^[A-Za-z0-9!%+,./:=@^_~-]*$/;
  return Object.entries(headers)
    .map(([name, value]) => {
      const arg = `${name}:${value}`;
      return SPLICE_SAFE.test(arg) ? `-H ${arg}` : `-H '${`${name}: ${value}`.replaceAll("'", "'\\''")}'`;
    })
    .join(' ');
}

export function formatHeaders(headers: Record<string, string>, format: OutputFormat): string {
  if (format === 'json') return `${JSON.stringify(headers, null, 2)}\n`;
  if (format === 'curl') return `${curlArguments(headers)}\n`;
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\n`)
    .join('');
}

export function registerSignCommand(program: Command): void {
  addConfigOption(
    program
      .command('sign')
      .description(
        'Print the headers a provider would send with a body, signed with a scheme and secret(s); for a signature carried in the body (paytr), the signed body.',
      )
      .addOption(new Option('--scheme <scheme>', 'signature scheme').choices(schemeNames))
      .option('--secret <secret>', 'signing secret; repeat for a rotation (one signature per secret)', collect, [])
      .option('--signing-key <whsk>', 'scheme standard: an Ed25519 secret key (whsk_…) adding a v1a signature; repeat for a rotation', collect, [])
      .option('--named-secret <name=value>', 'a further secret a template signs, e.g. salt=… for --scheme paytr; repeatable', collect, [])
      .option('--source <name>', 'take scheme, secrets and hmac options from this configured source')
      .option('--hmac <json>', 'options of the generic hmac scheme as JSON, e.g. \'{"signature_header":"X-Signature"}\'')
      .option('--id <id>', "delivery id for schemes that carry one (default: the body's event id, else a fresh one)")
      .option('--timestamp <unix>', 'signing time in unix seconds (default: now)')
      .requiredOption('--body <file>', 'file with the exact body bytes, or - for standard input')
      .addOption(
        new Option('--format <format>', 'output: "Name: value" lines, curl -H arguments, or a JSON object')
          .choices(['headers', 'curl', 'json'])
          .default('headers'),
      )
      .addHelpText(
        'after',
        `
Examples:
  tekil sign --scheme standard --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw --body event.json
  tekil sign --source demo --format json --body - < event.json
  tekil sign --scheme standard --signing-key "$WHSK" --body event.json    # v1a (Ed25519)
  tekil sign --scheme paytr --secret "$MERCHANT_KEY" --named-secret salt="$MERCHANT_SALT" \\
    --body notification.form > signed.form
  curl -sS http://127.0.0.1:8787/in/demo -H 'content-type: application/json' \\
    $(tekil sign --source demo --format curl --body event.json) --data-binary @event.json

The body is signed byte for byte as read; send it with --data-binary so curl does not alter it.
A scheme that carries its signature in the body (paytr: the form field hash) prints the signed
body instead of headers (--format json: {"headers": …, "body": …}).`,
      ),
  ).action(async (opts: SignOptions) => {
    const { scheme, secrets, namedSecrets, eventIdLocators } = await resolveSetup(opts);
    const body = await readBody(opts.body);
    const timestamp = parseTimestampOption(opts.timestamp);
    let id = opts.id;
    if (id === undefined && scheme.idHeader !== undefined) {
      id = eventIdFromBody(body, eventIdLocators) ?? (scheme.idPrefix ? newDeliveryId(scheme.idPrefix) : randomUUID());
    }
    if (opts.signingKey.length > 0 && scheme.name !== 'standard') throw new TekilError('VALIDATION_FAILED', '--signing-key (v1a) is for scheme standard');
    const signingKeys = opts.signingKey.map((key) => parseSecretKey(key));
    const input = {
      body,
      secrets,
      namedSecrets,
      ...(signingKeys.length > 0 ? { signingKeys } : {}),
      ...(id !== undefined ? { id } : {}),
      ...(timestamp !== undefined ? { timestamp } : {}),
    };
    const headers = scheme.sign(input);
    if (scheme.signBody) {
      const signed = scheme.signBody(input);
      process.stdout.write(opts.format === 'json' ? `${JSON.stringify({ headers, body: signed.toString('utf8') }, null, 2)}\n` : signed);
      return;
    }
    process.stdout.write(formatHeaders(headers, opts.format));
  });
}
