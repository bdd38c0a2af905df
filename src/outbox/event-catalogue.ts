import type { Logger } from '../logger.js';
import type { Context } from '../service.js';
import type { Queryable } from '../store/db.js';
import { TekilError } from '../errors.js';
import { catalogueSchemas } from '../store/sql/outbox/event-types.js';
import { compileEventSchema, type EventValidator } from './event-schema.js';

export interface EventCatalogueOptions {
  /** `refuse`: a mismatch is EVENT_SCHEMA_MISMATCH; `warn`: it is logged and the message is published. */
  onMismatch: 'refuse' | 'warn';
  /** A type not in the catalogue is refused (EVENT_TYPE_UNDECLARED). */
  requireDeclared: boolean;
  /** How long a read of the catalogue is used before it is read again (another process's changes). */
  refreshMs: number;
  logger?: Logger;
}

interface Declared {
  version: number;
  schema: unknown;
}

/**
 * The check publishing makes against the event catalogue (docs/event-types.md). Publishing is a hot
 * path, so nothing here queries per message: the catalogue's schemas are read at most once per
 * `refreshMs` (a stale read is used while the next one runs), and each schema is compiled once per
 * (type, version), when a message of the type first needs it. A change made through this process's API
 * is read at once (`reload`); another process's within `refreshMs`.
 */
export class EventCatalogue {
  private declared: Map<string, Declared> | undefined;
  private readAt = 0;
  private reading: Promise<Map<string, Declared>> | undefined;
  private readonly validators = new Map<string, EventValidator>();

  constructor(
    private readonly db: Queryable,
    private readonly options: EventCatalogueOptions,
  ) {}

  /**
   * Throws EVENT_SCHEMA_MISMATCH (with the failing path in `details`) when `data` does not match the
   * type's schema and mismatches are refused, EVENT_TYPE_UNDECLARED for an unknown type when types are
   * required. An undeclared type, or one declared without a schema, passes otherwise.
   */
  async check(type: string, data: unknown): Promise<void> {
    const declared = (await this.current()).get(type);
    if (!declared) {
      if (this.options.requireDeclared) {
        throw new TekilError('EVENT_TYPE_UNDECLARED', `event type ${type} is not in the catalogue`, {
          hint: 'declare it with POST /api/v1/event-types (or npx tekil event-types create), or turn sending.require_event_types off',
          details: { type },
        });
      }
      return;
    }
    if (declared.schema === null) return;
    const failure = this.validator(type, declared)(data, '$.data');
    if (!failure) return;
    const details = { type, version: declared.version, ...failure };
    if (this.options.onMismatch === 'warn') {
      this.options.logger?.warn({ mismatch: details }, `published ${type} although its data does not match the schema at ${failure.path}`);
      return;
    }
    throw new TekilError('EVENT_SCHEMA_MISMATCH', `data of ${type} does not match its schema at ${failure.path}: ${failure.message}`, {
      hint: `see the type with GET /api/v1/event-types/${encodeURIComponent(type)}`,
      details,
    });
  }

  /** Reads the catalogue now: after a change made in this process, the next message sees it. */
  async reload(): Promise<void> {
    this.declared = undefined;
    await this.current();
  }

  private current(): Map<string, Declared> | Promise<Map<string, Declared>> {
    if (this.declared === undefined) return this.read();
    if (Date.now() - this.readAt >= this.options.refreshMs && this.reading === undefined) {
      // Stale: this message uses what was read; the next ones get the fresh read.
      this.read().catch((err: unknown) => this.options.logger?.warn({ err }, 'reading the event catalogue failed; the last read stays in use'));
    }
    return this.declared;
  }

  private read(): Promise<Map<string, Declared>> {
    this.reading ??= (async () => {
      try {
        const { rows } = await catalogueSchemas.run(this.db, {});
        const declared = new Map(rows.map((r) => [r.name, { version: r.version, schema: r.schema }]));
        // Validators of versions no longer declared go.
        for (const key of this.validators.keys()) {
          const [name, version] = splitKey(key);
          if (declared.get(name)?.version !== version) this.validators.delete(key);
        }
        this.declared = declared;
        this.readAt = Date.now();
        return declared;
      } finally {
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  private validator(type: string, declared: Declared): EventValidator {
    const key = `${declared.version}\u0000${type}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = compileEventSchema(declared.schema, `schema of ${type}`);
      this.validators.set(key, validate);
    }
    return validate;
  }
}

function splitKey(key: string): [string, number] {
  const at = key.indexOf('\u0000');
  return [key.slice(at + 1), Number(key.slice(0, at))];
}

const byContext = new WeakMap<Context, EventCatalogue>();

/** One catalogue per context: the publishing route and the event-types routes share it. */
export function eventCatalogue(ctx: Context): EventCatalogue {
  let catalogue = byContext.get(ctx);
  if (!catalogue) {
    const sending = ctx.config.sending;
    catalogue = new EventCatalogue(ctx.db, {
      onMismatch: sending.event_types.on_mismatch,
      requireDeclared: sending.require_event_types,
      refreshMs: sending.event_types.refresh,
      logger: ctx.logger.child({ service: 'event-catalogue' }),
    });
    byContext.set(ctx, catalogue);
  }
  return catalogue;
}
