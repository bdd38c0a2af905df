import { Option, type Command } from 'commander';
import { TekilError } from '../errors.js';
import { parseDuration } from '../config/units.js';
import { createLogger } from '../logger.js';
import { endpointSchemes } from '../outbox/types.js';
import { allFaults, parseFaults } from '../simulate/faults.js';
import { parseHmacOption, parsePort } from './config.js';
import { Progress } from './progress.js';

interface SimulateOptions {
  target: string;
  callbackUrl?: string;
  eventId?: 'message' | 'delivery';
  scheme: (typeof endpointSchemes)[number] | 'paytr' | 'iyzico' | 'craftgate' | 'sipay';
  hmac?: string;
  secret?: string;
  salt?: string;
  invoices: number;
  timeScale: number;
  timeout: number;
  ladder: string;
  faults: string;
  seed?: number;
  dataDir: string;
  databaseUrl?: string;
  host: string;
  port: number;
  apiKey?: string;
  rateLimit: number;
  concurrency: number;
  serve: boolean;
  json: boolean;
}

const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new TekilError('VALIDATION_FAILED', `--${name}: expected a whole number, got "${value}"`);
  return n;
};

function parseScale(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n <= 1000)) throw new TekilError('VALIDATION_FAILED', `--time-scale: expected a number in (0, 1000], got "${value}"`);
  return n;
}

function parseTimeout(value: string): number {
  const ms = parseDuration(value);
  if (ms === undefined || ms < 1 || ms > 300_000)
    throw new TekilError('VALIDATION_FAILED', `--timeout: expected a duration from 1ms to 5m, like 10s, got "${value}"`);
  return ms;
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description(
      'Act as a payment provider at its worst: walk invoices through their lifecycle, send each event signed through the outbox with faults, and serve the provider list API.',
    )
    .requiredOption('--target <url>', 'where the events go, e.g. http://127.0.0.1:8787/in/shop-paymos')
    .option('--callback-url <url>', 'a second URL that gets every event with the same ids')
    .addOption(
      new Option(
        '--event-id <mode>',
        'event ids the receiver sees: delivery (each URL its own, the default for paymos without --callback-url) or message',
      ).choices(['message', 'delivery']),
    )
    .addOption(new Option('--scheme <name>', 'signature scheme').choices([...endpointSchemes, 'paytr', 'iyzico', 'craftgate', 'sipay']).default('paymos'))
    .option('--hmac <json>', "for --scheme hmac: its options as JSON (as in a source's hmac:)")
    .option(
      '--secret <whsec_…>',
      'signing secret (generated and printed when absent); for paytr the merchant key, for iyzico the secret key, for craftgate the webhook key, for sipay the app secret',
    )
    .option('--salt <salt>', 'for --scheme paytr: the merchant salt (generated and printed when absent)')
    .option('--invoices <n>', 'invoices to create', positiveInt('invoices'), 100)
    .option('--time-scale <factor>', 'multiply the ladder and the pause between lifecycle steps (sending.time_scale)', parseScale, 0.01)
    .option('--timeout <duration>', 'how long the provider waits for an answer', parseTimeout, 10_000)
    .option('--ladder <preset>', 'retry ladder preset (paymos, mercanpay, standard)', 'paymos')
    .option('--faults <list>', `drop=…,delay=…,duplicate=…,reorder=…,replay=…,rotate; "all" is ${JSON.stringify(allFaults)}`, 'none')
    .option('--seed <n>', 'repeat a run: the same seed plans the same invoices and faults', positiveInt('seed'))
    .option('--data-dir <dir>', "the simulator's own embedded store", './.tekil-simulate')
    .option('--database-url <url>', "a Postgres database of the simulator's own instead (its endpoints are replaced on every run)")
    .option('--host <host>', 'list API address', '127.0.0.1')
    .option('--port <n>', 'list API port (0 picks one)', parsePort, 8790)
    .option('--api-key <key>', 'bearer key of the list API (generated and printed when absent)')
    .option('--rate-limit <n>', 'list API requests per second before 429 with Retry-After; 0 for none', positiveInt('rate-limit'), 10)
    .option('--concurrency <n>', 'requests in flight at once, per URL', positiveInt('concurrency'), 32)
    .option('--serve', 'keep serving the list API after the run, until Ctrl-C', false)
    .option('--json', 'print the summary as JSON', false)
    .action(async (opts: SimulateOptions) => {
      const faults = parseFaults(opts.faults);
      if (opts.scheme === 'hmac' && opts.hmac === undefined) throw new TekilError('VALIDATION_FAILED', '--scheme hmac needs --hmac with its options');
      // Loaded here, not with the CLI: the simulator brings its own HTTP server and signing.
      const [{ startSimulator }, { formatSummary }] = await Promise.all([import('../simulate/simulator.js'), import('../simulate/report.js')]);
      // The tail of the run (deliveries retried on the ladder) can be long: a progress line on stderr.
      const settling = new Progress('simulate settled', { quiet: opts.json }, ' deliveries');
      let settleTotal: number | undefined;
      const sim = await startSimulator({
        target: opts.target,
        callbackUrl: opts.callbackUrl,
        eventId: opts.eventId,
        scheme: opts.scheme,
        hmac: opts.hmac === undefined ? undefined : parseHmacOption(opts.hmac),
        secret: opts.secret,
        salt: opts.salt,
        invoices: opts.invoices,
        timeScale: opts.timeScale,
        timeoutMs: opts.timeout,
        ladder: opts.ladder,
        faults,
        seed: opts.seed,
        dataDir: opts.dataDir,
        databaseUrl: opts.databaseUrl,
        listen: { host: opts.host, port: opts.port },
        apiKey: opts.apiKey,
        rateLimit: opts.rateLimit,
        concurrency: Math.max(1, opts.concurrency),
        logger: createLogger({ level: 'warn' }),
        onProgress: opts.json
          ? undefined
          : (line) => {
              settling.clear();
              process.stdout.write(`${line}\n`);
            },
        onSettling: (unsettled) => {
          settleTotal ??= unsettled;
          if (settleTotal > 0) settling.update({ done: settleTotal - unsettled, total: settleTotal });
        },
      });
      try {
        if (!opts.json) {
          process.stdout.write(
            `signing secret: ${sim.secret}\n${sim.salt ? `merchant salt: ${sim.salt}\n` : ''}list API: ${sim.listUrl} (Authorization: Bearer ${sim.apiKey})\n`,
          );
        }
        const summary = await sim.run().finally(() => settling.clear());
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ ...summary, listUrl: sim.listUrl, apiKey: sim.apiKey, secret: sim.secret, ...(sim.salt ? { salt: sim.salt } : {}) }, null, 2)}\n`
            : formatSummary(summary),
        );
        if (opts.serve) {
          process.stdout.write(`serving ${sim.listUrl} until Ctrl-C\n`);
          await new Promise<void>((resolve) => {
            process.once('SIGINT', resolve);
            process.once('SIGTERM', resolve);
          });
        }
      } finally {
        await sim.close();
      }
    });
}
