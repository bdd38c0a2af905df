import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load.js';
import { createLogger } from '../logger.js';
import { startTelemetry, tracesUrl } from './start.js';
import { parseTraceparent, tracing } from './tracing.js';

describe('telemetry', () => {
  it('is off without an endpoint: nothing is started and tracing() stays undefined', async () => {
    expect(await startTelemetry(parseConfig({}), undefined, createLogger({ level: 'silent' }))).toBeUndefined();
    expect(tracing()).toBeUndefined();
  });

  it('posts to <endpoint>/v1/traces unless the endpoint already names it', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('https://otlp.example/v1/traces')).toBe('https://otlp.example/v1/traces');
  });

  it('reads version-00 traceparents and refuses anything else', () => {
    expect(parseTraceparent(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`)).toEqual({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 });
    expect(parseTraceparent(`00-${'0'.repeat(32)}-${'b'.repeat(16)}-01`)).toBeUndefined();
    expect(parseTraceparent(`00-${'a'.repeat(32)}-${'0'.repeat(16)}-01`)).toBeUndefined();
    expect(parseTraceparent(`01-${'a'.repeat(32)}-${'b'.repeat(16)}-01`)).toBeUndefined();
    expect(parseTraceparent('garbage')).toBeUndefined();
    expect(parseTraceparent(undefined)).toBeUndefined();
  });

  it('refuses an otlp_endpoint that is not an http(s) URL', () => {
    expect(() => parseConfig({ telemetry: { otlp_endpoint: 'collector:4318' } })).toThrow(/otlp_endpoint/);
    expect(parseConfig({ telemetry: { otlp_endpoint: 'http://collector:4318' } }).telemetry).toEqual({
      otlp_endpoint: 'http://collector:4318',
      service_name: 'tekil',
      sample_ratio: 1,
    });
  });
});
