import { isIP } from 'node:net';
import { z } from 'zod';
import { parseCidr } from '../http/cidr.js';

/**
 * One entry of an `allow_networks` list. Checked here, when the configuration loads, so a typo such
 * as `10.0.0.0/33` stops startup with the key it sits at instead of failing deliveries later.
 */
export const networkCidr = z.string().superRefine((text, ctx) => {
  const parsed = parseCidr(text);
  if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
});

/**
 * One entry of `server.trust_proxy`: a proxy's address (`10.0.0.5`) or its network (`10.0.0.0/8`),
 * checked here because Fastify would otherwise throw its own error when the server is built.
 */
export const proxyAddress = z.string().superRefine((text, ctx) => {
  if (isIP(text) !== 0) return;
  const parsed = parseCidr(text);
  if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: `${parsed.problem}, or one address` });
});
