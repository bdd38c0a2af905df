import { z } from 'zod';
import { durationMs } from './units.js';

/**
 * The admin API's sign-in limit (docs/audit.md): after `failures` refused credentials within `window`
 * from one address, or with one token prefix, further attempts from it are answered 429 until the
 * oldest failure leaves the window. Per process: each api process counts its own.
 */
export const auditSchema = z
  .object({
    sign_in: z
      .object({
        failures: z.number().int().min(1).max(10_000).default(10),
        window: durationMs.pipe(z.number().min(1_000, 'expected at least 1s')).default(300_000),
      })
      .strict()
      .default({ failures: 10, window: 300_000 }),
  })
  .strict();
export type AuditConfig = z.infer<typeof auditSchema>;
