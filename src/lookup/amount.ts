/**
 * Amounts as exact decimals: providers write them differently (PayTR's status query `10,8`, its
 * notification `1080` in kuruş, iyzico `10.8`, Papara `10.80`), and money is never compared as a float.
 */
export interface Decimal {
  /** The value times 10^scale. */
  units: bigint;
  scale: number;
}

/** Decimal text with a `.` or a `,` as its separator (no thousands separators), in `minorUnits` when given. */
export function parseAmount(text: string, minorUnits = 0): Decimal | undefined {
  const m = /^\s*(-?)(\d+)(?:[.,](\d+))?\s*$/.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  const units = BigInt(`${m[1]}${m[2]}${fraction}`);
  return { units, scale: fraction.length + minorUnits };
}

export function sameAmount(a: Decimal, b: Decimal): boolean {
  const scale = Math.max(a.scale, b.scale);
  return a.units * 10n ** BigInt(scale - a.scale) === b.units * 10n ** BigInt(scale - b.scale);
}

/** An amount as a person reads it: `10.80`, with at least two decimals. */
export function formatAmount(d: Decimal): string {
  const scale = Math.max(d.scale, 2);
  const units = d.units * 10n ** BigInt(scale - d.scale);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

/** Currencies as providers write them: case aside, PayTR's `TL` is `TRY`. */
export function sameCurrency(a: string, b: string): boolean {
  const norm = (c: string) => {
    const upper = c.trim().toUpperCase();
    return upper === 'TL' ? 'TRY' : upper;
  };
  return norm(a) === norm(b);
}
