import { describe, expect, it } from 'vitest';
import { histogramQuantile } from './histogram-quantile.js';

describe('histogramQuantile', () => {
  it('interpolates inside the bucket the rank falls in', () => {
    // 10 observations ≤ 0.01, 10 more in (0.01, 0.1]
    const buckets = [
      { le: 0.01, count: 10 },
      { le: 0.1, count: 20 },
      { le: Infinity, count: 20 },
    ];
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.01);
    expect(histogramQuantile(0.75, buckets)).toBeCloseTo(0.055);
    expect(histogramQuantile(0.25, buckets)).toBeCloseTo(0.005);
  });

  it('answers the last finite bound for ranks in the +Inf bucket, and nothing for an empty histogram', () => {
    expect(
      histogramQuantile(0.99, [
        { le: 1, count: 1 },
        { le: Infinity, count: 100 },
      ]),
    ).toBe(1);
    expect(
      histogramQuantile(0.5, [
        { le: 1, count: 0 },
        { le: Infinity, count: 0 },
      ]),
    ).toBeUndefined();
  });
});
