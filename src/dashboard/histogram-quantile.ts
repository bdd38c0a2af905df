/** One cumulative bucket of a Prometheus histogram: how many observations were at most `le`. */
export interface CumulativeBucket {
  le: number;
  count: number;
}

/**
 * The q-quantile of a histogram the way Prometheus's histogram_quantile estimates it: find the bucket
 * the rank falls in and interpolate linearly inside it. Observations past the last finite bucket
 * answer that bucket's bound (the estimate cannot see further). Undefined when there is nothing.
 */
export function histogramQuantile(q: number, buckets: readonly CumulativeBucket[]): number | undefined {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of sorted) {
    if (bucket.count >= rank) {
      if (!Number.isFinite(bucket.le)) return lowerBound;
      const inBucket = bucket.count - lowerCount;
      return inBucket === 0 ? bucket.le : lowerBound + ((bucket.le - lowerBound) * (rank - lowerCount)) / inBucket;
    }
    lowerBound = bucket.le;
    lowerCount = bucket.count;
  }
  return lowerBound;
}
