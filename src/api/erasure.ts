import { z } from 'zod';
import { TekilError } from '../errors.js';
import { eraseInbound, type ErasureCounts } from '../inbox/erase.js';
import { eraseOutbound } from '../outbox/erase.js';
import type { Context } from '../service.js';
import { jsonTime } from './answers.js';
import type { ApiRoutes } from './route-spec.js';

const MAX_TEXT = 1024;
const MAX_IDS = 1000;
const text = z
  .string()
  .min(1)
  .max(MAX_TEXT)
  .refine((s) => !s.includes('\u0000') && !/\p{Cs}/u.test(s), 'must be text without NUL bytes or unpaired surrogates');

const erasureBody = z
  .object({
    /** Every delivery of this resource id, inbound and outbound. */
    resource_id: text.optional(),
    /** With resource_id: inbound deliveries of this source only (outbound ones are chosen by resource id alone). */
    source: text.optional(),
    /** Chosen inbound deliveries. */
    inbound: z
      .array(z.object({ source: text, event_id: text }).strict())
      .max(MAX_IDS)
      .default([]),
    /** Chosen outbound messages, by id. */
    messages: z.array(text).max(MAX_IDS).default([]),
    /** Chosen outbound deliveries, by id: their messages are erased (the bytes are the message's). */
    deliveries: z
      .array(z.union([z.string().regex(/^\d{1,18}$/), z.number().int().positive()]).transform(String))
      .max(MAX_IDS)
      .default([]),
    /** Erasure cannot be undone: it must be asked for with `confirm: true`. */
    confirm: z.boolean().default(false),
  })
  .strict()
  .refine((b) => b.resource_id !== undefined || b.inbound.length + b.messages.length + b.deliveries.length > 0, {
    message: 'choose what to erase: resource_id, inbound, messages or deliveries',
  })
  .refine((b) => b.source === undefined || b.resource_id !== undefined, { message: 'source narrows resource_id; give resource_id with it', path: ['source'] });

const countsAnswer = z.object({ erased: z.number().int(), already: z.number().int(), in_flight: z.number().int() });
/** What an erasure answers: per side, what it erased, what was erased before, what it left (not settled). */
const erasureAnswer = z.object({ at: jsonTime, inbound: countsAnswer, outbound: countsAnswer });

export interface ErasureResult {
  /** When the request was served. */
  at: Date;
  inbound: ErasureCounts;
  outbound: ErasureCounts;
}

/**
 * KVKK / GDPR erasure (docs/erasure.md): empties the bodies and headers of the chosen deliveries,
 * keeping their ids as tombstones so a late copy is still a duplicate. A tenant's caller erases its
 * own outbound messages; inbound deliveries are the operators' (tenants have no inbox).
 */
export function erasureRoutes(routes: ApiRoutes, ctx: Context): void {
  routes.add(
    {
      method: 'POST',
      url: '/erasures',
      tag: 'erasure',
      summary: "Erase a person's data: the bodies of chosen deliveries, or of every delivery of a resource id, keeping their ids",
      permission: 'operate',
      tenant: true,
      body: erasureBody,
      response: erasureAnswer,
    },
    async ({ body, scope }, req): Promise<ErasureResult> => {
      if (!body.confirm) {
        throw new TekilError('CONFIRMATION_REQUIRED', 'erasure empties bodies for good; nothing can bring them back', {
          hint: 'send "confirm": true (npx tekil erase … --confirm) once you mean it',
        });
      }
      if (scope.tenantId !== undefined && (body.inbound.length > 0 || body.source !== undefined)) {
        throw new TekilError('VALIDATION_FAILED', "inbound deliveries are erased by the provider's operators; a tenant erases its own outbound messages", {
          hint: 'leave out inbound and source',
        });
      }
      const at = new Date();
      // One transaction: a chosen id that is not found erases nothing at all.
      const { inbound, outbound } = await ctx.db.transaction(async (tx) => ({
        inbound:
          scope.tenantId === undefined
            ? await eraseInbound(tx, { deliveries: body.inbound, resourceId: body.resource_id, source: body.source })
            : { erased: 0, already: 0, in_flight: 0 },
        outbound: await eraseOutbound(tx, scope, { messageIds: body.messages, deliveryIds: body.deliveries, resourceId: body.resource_id }),
      }));
      req.auditCounts = {
        inbound_erased: inbound.erased,
        inbound_already: inbound.already,
        inbound_in_flight: inbound.in_flight,
        outbound_erased: outbound.erased,
        outbound_already: outbound.already,
        outbound_in_flight: outbound.in_flight,
      };
      return { at, inbound, outbound };
    },
  );
}
