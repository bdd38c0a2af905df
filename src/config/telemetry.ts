import { z } from 'zod';

/**
 * Tracing (docs/tracing.md): off unless an OTLP/HTTP endpoint is named here or in
 * TEKIL_OTLP_ENDPOINT (which wins). Off, no OpenTelemetry code is loaded.
 */
export const telemetrySchema = z
  .object({
    /** The collector's OTLP/HTTP address, e.g. http://collector:4318 (spans go to <it>/v1/traces). */
    otlp_endpoint: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
    /** `service.name` of every span this process exports. */
    service_name: z.string().min(1).max(255).default('tekil'),
    /** Share of new traces recorded (0 to 1); a trace begun upstream follows its sender's decision. */
    sample_ratio: z.number().min(0).max(1).default(1),
  })
  .strict();
export type TelemetryConfig = z.infer<typeof telemetrySchema>;
