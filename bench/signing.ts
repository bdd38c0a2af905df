/**
 * Verification cost per scheme: how many requests one core can verify per second, with a 1 KiB body,
 * two active secrets and the signature made with the second one (the worst ordinary case during a
 * rotation). Run: npx tsx bench/signing.ts [iterations]
 */
import { randomBytes } from 'node:crypto';
import { hmacSchemeOptions, schemeNames } from '../src/config/source.js';
import { createScheme } from '../src/signing/index.js';

const iterations = Number(process.argv[2] ?? 50_000);
const body = Buffer.from(JSON.stringify({ event_id: 'evt_1', event_type: 'invoice.paid', data: { invoice_id: 'inv_1', pad: 'x'.repeat(940) } }));
const hmacOptions = hmacSchemeOptions.parse({
  signature_header: 'X-Signature',
  prefix: 'sha256=',
  separator: ',',
  signed_payload: '{timestamp}.{body}',
  timestamp_header: 'X-Timestamp',
});

const rows: string[] = [];
for (const name of schemeNames) {
  const scheme = createScheme(name, name === 'hmac' ? hmacOptions : undefined);
  const secret = () => (name === 'standard' ? `whsec_${randomBytes(32).toString('base64')}` : `whsec_${randomBytes(24).toString('hex')}`);
  const [oldSecret, newSecret] = [secret(), secret()];
  const signed = scheme.sign({ body, secrets: [newSecret], id: 'evt_1' });
  const headers = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v]));
  const input = { body, headers, secrets: [oldSecret, newSecret], toleranceSec: 300 };
  for (let i = 0; i < 2_000; i++) scheme.verify(input); // warm-up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) scheme.verify(input);
  const ns = Number(process.hrtime.bigint() - start);
  rows.push(
    `${name.padEnd(9)} ${Math.round((iterations * 1e9) / ns)
      .toLocaleString('en-US')
      .padStart(9)} verifies/s  ${(ns / iterations / 1000).toFixed(1).padStart(5)} µs each`,
  );
}
console.log(`signature verification, 1 KiB body, 2 secrets, ${iterations.toLocaleString('en-US')} iterations per scheme (one core)`);
for (const row of rows) console.log(row);
