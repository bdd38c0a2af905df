import { existsSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { RunningTekil } from '../runtime.js';
import type { AdminToken } from '../auth/admin-token.js';
import type { SourceConfig } from '../config/source.js';
import { createScheme } from '../signing/index.js';
import { DEFAULT_CONFIG_PATH } from './config.js';

/** What the first command sends: the body in the shape the scheme's provider sends, and how. */
interface FirstRequest {
  /** The file the body is written to (its extension says what it is). */
  file: string;
  body: string;
  contentType: string;
  /** The signature travels in the body (PayTR's form field `hash`): `tekil sign` prints the signed body. */
  signedBody: boolean;
  /** Pass `--id`: the scheme carries the id in a header its locators read (github, shopify, standard). */
  id: boolean;
}

const SAMPLE_ID = 'evt_first_1';

/**
 * A small request in the shape the scheme's provider sends, so the default locators find its fields
 * and the signature covers what the scheme signs (a form for PayTR, iyzico's direct notification).
 */
export function firstRequest(source: Pick<SourceConfig, 'scheme' | 'hmac'>): FirstRequest {
  const json = (body: unknown): Omit<FirstRequest, 'id'> => ({
    file: 'first-event.json',
    body: JSON.stringify(body),
    contentType: 'application/json',
    signedBody: false,
  });
  switch (source.scheme) {
    case 'paymos':
      return {
        ...json({
          event_id: SAMPLE_ID,
          event_type: 'invoice.paid',
          occurred_at: new Date().toISOString().slice(0, 19) + 'Z',
          data: { invoice_id: 'inv_1', status: 'paid' },
        }),
        id: false,
      };
    case 'stripe':
      return { ...json({ id: SAMPLE_ID, object: 'event', type: 'invoice.paid', data: { object: { id: 'in_1' } } }), id: false };
    case 'paytr':
      // PayTR's notification form ("Bildirim URL"); `tekil sign` adds the hash field.
      return {
        file: 'first-event.form',
        body: 'merchant_oid=first1&status=success&total_amount=4990&payment_type=card&currency=TL&payment_amount=4990&test_mode=1',
        contentType: 'application/x-www-form-urlencoded',
        signedBody: true,
        id: false,
      };
    case 'iyzico':
      // iyzico's direct notification: its id is made of signed fields, no header carries one.
      return {
        ...json({
          iyziEventTime: Date.now(),
          iyziEventType: 'API_AUTH',
          iyziReferenceCode: 'first-1',
          paymentId: '1001',
          paymentConversationId: 'first-1',
          status: 'SUCCESS',
        }),
        id: false,
      };
    case 'papara':
      // Papara's payment object; `tekil sign` adds merchantSecretKey (the secret travels in the body).
      return {
        ...json({
          id: 'pay_first_1',
          createdAt: new Date().toISOString().slice(0, 19),
          referenceId: 'order_first_1',
          orderDescription: 'first',
          status: 1,
          amount: 49.9,
          fee: 0,
          currency: 0,
          notificationDone: false,
        }),
        signedBody: true,
        id: false,
      };
    case 'craftgate':
      // Craftgate's merchant webhook: the signature covers eventType, eventTimestamp, status, payloadId.
      return {
        ...json({
          eventType: 'API_AUTH',
          eventTime: new Date().toISOString().slice(0, 19),
          eventTimestamp: Math.floor(Date.now() / 1000),
          status: 'SUCCESS',
          payloadId: 'first1',
        }),
        id: false,
      };
    case 'sipay':
      // Sipay's notification; `tekil sign` adds the hash_key token made of its fields.
      return {
        ...json({ invoice_id: 'first1', order_id: 'order_first_1', status: 'Completed', total: '49.90', currency_code: 'TRY' }),
        signedBody: true,
        id: false,
      };
    case 'hmac': {
      // A signature in the body (a form field or a JSON field): `tekil sign` writes it there.
      const inBody = source.hmac?.signature !== undefined && !source.hmac.signature.startsWith('header:');
      const form = inBody && source.hmac!.signature!.startsWith('form:');
      if (form)
        return {
          file: 'first-event.form',
          body: `id=${SAMPLE_ID}&type=invoice.paid`,
          contentType: 'application/x-www-form-urlencoded',
          signedBody: true,
          id: false,
        };
      return { ...json({ id: SAMPLE_ID, type: 'invoice.paid', data: { id: 'inv_1' } }), signedBody: inBody, id: source.hmac?.id_header !== undefined };
    }
    default:
      // standard, github, shopify: the id travels in a header.
      return { ...json({ id: SAMPLE_ID, type: 'invoice.paid', data: { id: 'inv_1' } }), id: true };
  }
}

/**
 * How to call the CLI again from here, so the printed command works as is: `npx tekil …` wherever npm
 * finds the bin (an installed package, a global install, a clone: the one spelling the docs use), and
 * `node <path>` elsewhere (an image that runs dist/cli/main.js without the package around it).
 */
function tekilCommand(): string {
  const script = process.argv[1] ?? 'tekil';
  if (basename(script) === 'tekil') return 'npx tekil';
  // A clone: dist/cli/main.js next to src/ and the package's own package.json.
  const root = resolve(dirname(script), '../..');
  if (existsSync(join(root, 'src/cli/main.ts')) && existsSync(join(root, 'package.json'))) return 'npx tekil';
  return `node ${relative(process.cwd(), script) || script}`;
}

/**
 * Shell lines that send one signed webhook to a source, in its scheme's own shape; sending it twice
 * shows deduplication. `tekil` is how to call the CLI (the printed lines use `npx tekil` or `node …`).
 */
export function firstWebhookLines(
  url: string,
  source: string,
  config: Pick<SourceConfig, 'scheme' | 'hmac' | 'ack'>,
  configPath: string | undefined,
  tekil: string = tekilCommand(),
): string[] {
  const request = firstRequest(config);
  const configOption = configPath && configPath !== DEFAULT_CONFIG_PATH ? ` --config ${configPath}` : '';
  const sign = `${tekil} sign${configOption} --source ${source}${request.id ? ` --id ${SAMPLE_ID}` : ''}`;
  const post = `curl -sS ${url}/in/${source} -H 'content-type: ${request.contentType}'`;
  const answers = config.ack ?? createScheme(config.scheme, config.hmac).ack;
  const twice =
    answers === undefined
      ? 'run the curl twice: "accepted", then "duplicate"'
      : `run the curl twice: both answered ${JSON.stringify(answers.body)}, the second recorded as a duplicate`;
  const write = `  printf '%s' '${request.body}' > ${request.file}`;
  if (request.signedBody) {
    return [
      `send a first signed webhook (${twice}):`,
      write,
      `  ${sign} --body ${request.file} > first-event.signed`,
      `  ${post} --data-binary @first-event.signed`,
    ];
  }
  return [`send a first signed webhook (${twice}):`, write, `  ${post} $(${sign} --format curl --body ${request.file}) --data-binary @${request.file}`];
}

/**
 * Where the admin token is: in full once, when this start made it; afterwards where it is kept and
 * the command that prints it, so a later start still points to it.
 */
export function adminTokenLines(adminToken: AdminToken | undefined): string[] {
  if (!adminToken) return [];
  if (adminToken.generated) return [`admin token (shown once, saved to ${adminToken.file}): ${adminToken.token}`];
  if (adminToken.file) return [`admin token: saved in ${adminToken.file} (\`npx tekil admin-token\` prints it)`];
  return ['admin token: from TEKIL_ADMIN_TOKEN'];
}

/**
 * A few lines a newcomer needs right after start: where it listens, the store, the admin token. On
 * stderr: stdout carries the log lines (JSON when it is not a terminal), and the banner is not one.
 */
export function printStartBanner(running: RunningTekil, configPath: string | undefined, adminToken: AdminToken | undefined): void {
  const { ctx, url } = running;
  const out: string[] = [];
  out.push(`tekil listening on ${url} (config: ${configPath ?? 'none'})`);
  if (ctx.db.kind === 'pglite') {
    out.push(`store: embedded PGlite in ${running.dataDir} (single process, no fsync: for development; set DATABASE_URL for production)`);
  } else {
    out.push('store: PostgreSQL (DATABASE_URL)');
  }
  if (running.metricsUrl) out.push(`metrics: ${running.metricsUrl}/metrics (server.metrics_port)`);
  out.push(...adminTokenLines(adminToken));
  const sources = Object.keys(ctx.config.sources);
  out.push(sources.length ? `sources: ${sources.map((s) => `${url}/in/${s}`).join(', ')}` : 'no sources configured: add some under "sources:" in tekil.yaml');
  const first = sources[0];
  if (first !== undefined && running.app.hasRoute({ method: 'POST', url: '/in/:source' })) {
    out.push(...firstWebhookLines(url, first, ctx.config.sources[first]!, configPath));
  }
  process.stderr.write(`${out.join('\n')}\n`);
}
