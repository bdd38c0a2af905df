import type { EventType } from './event-types.js';

type Json = Record<string, unknown>;

/** A component key for a type name: AsyncAPI keys are `^[a-zA-Z0-9.\-_]+$`; `:` becomes `_`. */
const key = (name: string): string => name.replace(/[^A-Za-z0-9.\-_]/g, '_');

/**
 * The body tekil sends for a message of this type (src/outbox/publish.ts, buildEnvelope): the
 * Standard Webhooks names and the providers' names side by side, `data` as the type's schema says.
 */
function envelopeSchema(type: EventType): Json {
  const time = { type: 'string', format: 'date-time' };
  return {
    type: 'object',
    required: ['event_id', 'event_type', 'type', 'occurred_at', 'timestamp', 'resource_id', 'data'],
    properties: {
      event_id: { type: 'string', description: 'the same in every retry and replay: deduplicate on it' },
      event_type: { const: type.name },
      type: { const: type.name },
      occurred_at: time,
      timestamp: time,
      resource_id: { type: ['string', 'null'], description: 'the business object the event is about' },
      data: type.schema ?? {},
    },
  };
}

/**
 * The catalogue as an AsyncAPI 3.0 document: one channel per type (its address is the type's name), a
 * `send` operation for each (tekil sends, the merchant's endpoint receives), and each message's payload
 * as the envelope with the type's schema as `data`. The payloads are JSON Schema 2020-12, named by their
 * `schemaFormat`.
 */
export function asyncApiDocument(types: readonly EventType[], info: { title: string; version: string }): { asyncapi: '3.0.0' } & Json {
  const channels: Json = {};
  const operations: Json = {};
  const messages: Json = {};
  for (const type of types) {
    const k = key(type.name);
    const message: Json = {
      name: type.name,
      title: type.name,
      summary: type.description,
      contentType: 'application/json',
      payload: { schemaFormat: 'application/schema+json;version=2020-12', schema: envelopeSchema(type) },
    };
    if (type.deprecated) message['x-deprecated'] = true;
    if (type.example !== null && type.example !== undefined) {
      message.examples = [
        {
          name: 'example',
          payload: {
            event_id: 'evt_example',
            event_type: type.name,
            type: type.name,
            occurred_at: '2026-01-01T00:00:00.000Z',
            timestamp: '2026-01-01T00:00:00.000Z',
            resource_id: null,
            data: type.example,
          },
        },
      ];
    }
    messages[k] = message;
    channels[k] = { address: type.name, description: type.description, messages: { [k]: { $ref: `#/components/messages/${k}` } } };
    operations[`send_${k}`] = {
      action: 'send',
      summary: type.description,
      channel: { $ref: `#/channels/${k}` },
      messages: [{ $ref: `#/channels/${k}/messages/${k}` }],
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: info.title,
      version: info.version,
      description:
        'The webhooks this provider sends through tekil: each message is POSTed, signed (Standard Webhooks by default), to the endpoints subscribed to its type.',
    },
    defaultContentType: 'application/json',
    channels,
    operations,
    components: { messages },
  };
}
