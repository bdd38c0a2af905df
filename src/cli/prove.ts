import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { TekilError } from '../errors.js';
import { parseDuration } from '../config/units.js';
import { schemeNames, type SchemeName } from '../signing/index.js';
import { parseHmacOption } from './config.js';
import { parseNamedSecrets } from './sign.js';
import { defaultProveOptions, formatJunit, formatRow, formatSummary, parseCheckList, runProve, type ProveOptions } from '../prove/index.js';

interface ProveCliOptions {
  url: string;
  scheme: SchemeName;
  secret: string;
  hmac?: string;
  namedSecret: string[];
  effects: string;
  control?: string;
  callbackUrl?: string;
  providerList?: string;
  providerKey?: string;
  providerResource: string;
  json?: boolean;
  junit?: string;
  only?: string;
  skip?: string;
  providerTimeout: string;
  effectTimeout: string;
  settle: string;
  copies: string;
}

function duration(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) throw new TekilError('VALIDATION_FAILED', `${flag}: "${text}" is not a duration`, { hint: 'e.g. 500ms, 10s, 1m' });
  return ms;
}

function httpUrl(text: string | undefined, flag: string): string | undefined {
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    throw new TekilError('VALIDATION_FAILED', `${flag}: "${text}" is not a URL`, { cause: err });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TekilError('VALIDATION_FAILED', `${flag}: only http and https URLs`);
  return url.href;
}

function proveOptions(opts: ProveCliOptions): ProveOptions {
  if (opts.scheme === 'hmac' && opts.hmac === undefined) throw new TekilError('VALIDATION_FAILED', '--scheme hmac needs --hmac with its options');
  const copies = Number(opts.copies);
  if (!Number.isInteger(copies) || copies < 2 || copies > 500) throw new TekilError('VALIDATION_FAILED', '--copies: a whole number from 2 to 500');
  const hmac = opts.hmac === undefined ? undefined : parseHmacOption(opts.hmac);
  const namedSecrets = parseNamedSecrets(opts.namedSecret);
  if (opts.scheme === 'paytr' && namedSecrets.salt === undefined) {
    throw new TekilError('VALIDATION_FAILED', '--scheme paytr needs --named-secret salt=<merchant_salt>', { hint: '--secret is the merchant_key' });
  }
  const control = httpUrl(opts.control, '--control');
  const callbackUrl = httpUrl(opts.callbackUrl, '--callback-url');
  const providerList = httpUrl(opts.providerList, '--provider-list');
  if (providerList && opts.providerKey === undefined) throw new TekilError('VALIDATION_FAILED', '--provider-list needs --provider-key, its API key');
  return {
    url: httpUrl(opts.url, '--url') as string,
    scheme: opts.scheme,
    secret: opts.secret,
    ...(hmac ? { hmac } : {}),
    ...(Object.keys(namedSecrets).length ? { namedSecrets } : {}),
    effectsUrl: httpUrl(opts.effects, '--effects') as string,
    ...(control ? { controlUrl: control } : {}),
    ...(callbackUrl ? { callbackUrl } : {}),
    providerTimeoutMs: duration(opts.providerTimeout, '--provider-timeout'),
    effectTimeoutMs: duration(opts.effectTimeout, '--effect-timeout'),
    settleMs: duration(opts.settle, '--settle'),
    retryLadderMs: defaultProveOptions.retryLadderMs,
    concurrentCopies: copies,
    ...(providerList ? { providerList: { url: providerList, apiKey: opts.providerKey!, resourceField: opts.providerResource } } : {}),
  };
}

export function registerProveCommand(program: Command): void {
  program
    .command('prove')
    .description("score a live receiver's idempotency by replaying signed webhooks at it and reading its effects (docs/prove.md)")
    .requiredOption('--url <url>', "the receiver's webhook URL")
    .addOption(new Option('--scheme <scheme>', 'signature scheme the receiver verifies').choices(schemeNames).makeOptionMandatory())
    .requiredOption('--secret <secret>', "the receiver's signing secret for this scheme (standard: whsec_… signs v1, an Ed25519 whsk_… signs v1a)")
    .option('--hmac <json>', "for --scheme hmac: its options as JSON (as in a source's hmac:)")
    .option(
      '--named-secret <name=value>',
      'a further secret the scheme signs, e.g. salt=… (merchant_salt) for --scheme paytr; repeatable',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .requiredOption('--effects <url>', 'GET → {"<resource id>": {"count": n, "state": "…"}}')
    .option('--control <url>', 'base of POST fail-next / slow-next?ms=N (staging only); without it busy-duplicate, crash and replay-after-fix are skipped')
    .option('--callback-url <url>', 'a second URL of the same receiver, for second-endpoint')
    .option('--provider-list <url>', "the provider's list API (e.g. tekil simulate's …/v1/invoices): reconcile also compares every listed resource")
    .option('--provider-key <key>', 'bearer key of --provider-list')
    .option('--provider-resource <field>', 'the list item field your effects are keyed by', 'id')
    .option('--json', 'print the whole report as JSON instead of a table')
    .option('--junit <file>', 'also write a JUnit XML report for CI')
    .option('--only <ids>', 'run only these checks (comma-separated)')
    .option('--skip <ids>', 'leave out these checks (comma-separated)')
    .option('--provider-timeout <duration>', 'how long prove waits for an answer before giving up, as a provider does', '10s')
    .option('--effect-timeout <duration>', 'how long an effect may take to appear (receivers that queue)', '30s')
    .option('--settle <duration>', 'quiet time after an effect, to see a second one arrive', '2s')
    .option('--copies <n>', 'copies sent at once by the concurrent check', '20')
    .action(async (opts: ProveCliOptions) => {
      const options = proveOptions(opts);
      const selection = {
        ...(opts.only ? { only: parseCheckList(opts.only, '--only') } : {}),
        ...(opts.skip ? { skip: parseCheckList(opts.skip, '--skip') } : {}),
      };
      const colour = process.stdout.isTTY === true;
      const report = await runProve(options, selection, opts.json ? undefined : (row) => process.stdout.write(`${formatRow(row, colour)}\n`));
      if (opts.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else process.stdout.write(`\n${formatSummary(report, colour)}\n`);
      if (opts.junit) {
        try {
          await writeFile(opts.junit, formatJunit(report));
        } catch (err) {
          throw new TekilError('VALIDATION_FAILED', `--junit: cannot write ${opts.junit}`, { cause: err });
        }
      }
      if (!report.ok) process.exitCode = 1;
    });
}
