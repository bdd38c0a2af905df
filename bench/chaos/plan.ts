/**
 * What the chaos run sends: invoice lifecycles for the shop's handlers (`invoice.confirming` then
 * `invoice.paid`, so a late `confirming` is stale) and single events for the forwarding source, with
 * non-ASCII ids, invoice ids and types; 20% of the events get extra copies, some sent at the same
 * moment on separate connections and some later in the stream; and the stream is shuffled in windows,
 * so a `paid` often arrives before its `confirming`. Everything follows from the seed.
 */
import { seededRandom } from '../../src/simulate/lifecycle.js';

export { seededRandom };

export const HANDLED_SOURCE = 'shop-paymos';
export const FORWARDED_SOURCE = 'shop-forward';

export interface PlannedSend {
  source: string;
  eventId: string;
  body: string;
  /** Copies sent at the same moment (1 = no concurrent duplicate). */
  together: number;
}

export interface ChaosPlan {
  sends: PlannedSend[];
  events: number;
  /** Events that got at least one extra copy. */
  duplicated: number;
  invoices: number;
}

const accents = ['ç', 'ğ', 'ü', 'ş', 'ö', 'ı', 'é', 'ñ', '請求', '🧾'];
const forwardedTypes = ['fatura.ödendi', 'invoice.paid', 'ödeme.iade_edildi', '請求書.支払済み', 'payout.créé'];

export function planChaos(events: number, seed: number, duplicateShare = 0.2, window = 64): ChaosPlan {
  const random = seededRandom(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const base: Array<{ source: string; eventId: string; body: string }> = [];
  const invoices = Math.floor((events * 0.7) / 2);
  const start = Date.parse('2026-12-01T00:00:00Z');
  const forwarded = events - invoices * 2;
  let nextForwarded = 0;
  const addForwarded = () => {
    const f = nextForwarded++;
    const eventId = `evt_fwd_${f}_${pick(accents)}`;
    base.push({
      source: FORWARDED_SOURCE,
      eventId,
      body: JSON.stringify({ event_id: eventId, event_type: pick(forwardedTypes), data: { müşteri: `cus_${f}_ş` } }),
    });
  };
  for (let k = 0; k < invoices; k++) {
    const invoiceId = `inv_${k}_${pick(accents)}`;
    for (const [step, status] of (['confirming', 'paid'] as const).entries()) {
      const eventId = `evt_${k}_${step}_${pick(accents)}`;
      const body = JSON.stringify({
        event_id: eventId,
        event_type: `invoice.${status}`,
        version: 1,
        occurred_at: new Date(start + k * 10_000 + step * 1_000).toISOString(),
        data: { invoice_id: invoiceId, status, amount: '10.00', currency: 'TRY', note: 'ödendi ✓' },
      });
      base.push({ source: HANDLED_SOURCE, eventId, body });
    }
    // The forwarded events are spread evenly between the invoices'.
    while (nextForwarded < Math.floor(((k + 1) * forwarded) / invoices)) addForwarded();
  }
  while (nextForwarded < forwarded) addForwarded();
  // Reordering: shuffle within windows (Fisher-Yates), so neighbours trade places but the stream moves on.
  for (let w = 0; w < base.length; w += window) {
    for (let i = Math.min(base.length, w + window) - 1; i > w; i--) {
      const j = w + Math.floor(random() * (i - w + 1));
      [base[i], base[j]] = [base[j]!, base[i]!];
    }
  }
  const firstCopies: PlannedSend[] = base.map((e) => ({ ...e, together: 1 }));
  const laterCopies = new Map<number, PlannedSend[]>();
  let duplicated = 0;
  for (let i = 0; i < firstCopies.length; i++) {
    if (random() >= duplicateShare) continue;
    duplicated++;
    if (random() < 0.5) {
      firstCopies[i]!.together = 2 + Math.floor(random() * 2); // two or three copies at once
    } else {
      // A later copy, as a provider's retry or a manual resend would be.
      const at = Math.min(firstCopies.length - 1, i + 1 + Math.floor(random() * 2_000));
      laterCopies.set(at, [...(laterCopies.get(at) ?? []), { ...base[i]!, together: 1 }]);
    }
  }
  const sends = firstCopies.flatMap((send, i) => [send, ...(laterCopies.get(i) ?? [])]);
  return { sends, events: base.length, duplicated, invoices };
}
