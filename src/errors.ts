import { isStoreUnavailable, isStoreUnreachable, pgErrorCode } from './pg-error.js';

/**
 * The one catalogue of tekil's coded errors. Each code has a fixed HTTP status and a default message,
 * so every surface (receiver, admin API, CLI) reports the same failure the same way. Every code is
 * documented in docs/errors.md (a test keeps the two in step).
 */
interface CatalogueEntry {
  status: number;
  message: string;
}

export const errorCatalogue = {
  // receiving
  SOURCE_NOT_FOUND: { status: 404, message: 'no such source is configured' },
  BODY_TOO_LARGE: { status: 413, message: 'the request body exceeds the size limit' },
  SIGNATURE_MISSING: { status: 401, message: 'the request carries no signature' },
  SIGNATURE_MALFORMED: { status: 401, message: 'the signature header cannot be read' },
  SIGNATURE_INVALID: { status: 401, message: 'no signature matches any active secret' },
  TIMESTAMP_MISSING: { status: 401, message: 'the signed timestamp is missing' },
  TIMESTAMP_MALFORMED: { status: 401, message: 'the signed timestamp is not a number of seconds' },
  TIMESTAMP_OUT_OF_TOLERANCE: { status: 401, message: 'the signed timestamp is outside the tolerance' },
  EVENT_ID_MISSING: { status: 400, message: 'the event id is missing' },
  EVENT_ID_INVALID: { status: 400, message: 'the event id is not usable' },
  BODY_NOT_JSON: { status: 400, message: 'the body is not valid JSON' },
  STORE_UNAVAILABLE: { status: 503, message: 'the store is unavailable, retry later' },
  STORE_REJECTED: { status: 500, message: 'the store refused the write' },
  OVERLOADED: { status: 503, message: 'too much work in flight, retry later' },
  ACK_DEADLINE_EXCEEDED: { status: 503, message: 'the delivery was not committed within the acknowledgement deadline, retry later' },
  SHUTTING_DOWN: { status: 503, message: 'tekil is shutting down, retry later' },
  JWKS_UNAVAILABLE: { status: 503, message: "the provider's public keys (JWKS) cannot be fetched, retry later" },
  // HTTP requests in general (what the web framework refuses before a route runs)
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'the content type is not accepted here' },
  REQUEST_MALFORMED: { status: 400, message: 'the request is malformed' },
  BODY_TOO_DEEP: { status: 400, message: 'the JSON body nests deeper than the limit' },
  URL_TOO_LONG: { status: 414, message: 'a path segment is too long' },
  HEADERS_TOO_LARGE: { status: 431, message: 'the request headers exceed the size limit' },
  REQUEST_TIMEOUT: { status: 408, message: 'the request was not received in time' },
  // admin API
  UNAUTHORIZED: { status: 401, message: 'missing or wrong admin token' },
  FORBIDDEN: { status: 403, message: "the caller's role does not allow this" },
  SIGN_IN_LIMITED: { status: 429, message: 'too many refused sign-ins from this address or token, retry later' },
  NOT_FOUND: { status: 404, message: 'not found' },
  TENANT_NOT_FOUND: { status: 404, message: 'no such tenant' },
  PORTAL_LINK_GONE: { status: 410, message: 'the portal link was used before, has expired, or does not exist' },
  CONFIRMATION_REQUIRED: { status: 400, message: 'this operation removes data and must be confirmed' },
  CONFLICT: { status: 409, message: 'the change conflicts with the current state' },
  BODY_TRIMMED: { status: 409, message: 'the body was trimmed by retention; there is nothing left to replay' },
  ERASED: { status: 410, message: 'the body was erased on request; the delivery is never replayed' },
  VALIDATION_FAILED: { status: 400, message: 'the input is not valid' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'the Idempotency-Key was first used with a different request' },
  TENANT_LIMIT_EXCEEDED: { status: 422, message: "the value is beyond what the operator allows a tenant's own callers to set" },
  FORBIDDEN_DESTINATION: { status: 400, message: 'the destination is on a private, loopback or link-local network' },
  QUOTA_EXCEEDED: { status: 409, message: 'the tenant holds as many of these as its quota allows' },
  TOO_MANY_STREAMS: { status: 429, message: 'too many event streams are open for this tenant, credential or address' },
  EVENT_SCHEMA_MISMATCH: { status: 422, message: "the message's data does not match its event type's schema" },
  EVENT_TYPE_UNDECLARED: { status: 422, message: 'the event type is not in the catalogue, and sending.require_event_types is on' },
  // sending
  SECRET_KEY_MISMATCH: { status: 500, message: 'stored secrets were encrypted with another secret key' },
  // the CLI, talking to a running tekil
  SERVER_UNREACHABLE: { status: 503, message: 'cannot reach tekil' },
  // tekil prove, talking to a receiver under test
  PROVE_EFFECTS_UNREACHABLE: { status: 502, message: "the receiver's effects URL cannot be read" },
  PROVE_EFFECTS_INVALID: { status: 502, message: "the receiver's effects do not follow the effects contract" },
  PROVE_CONTROL_FAILED: { status: 502, message: "the receiver's control URL did not accept a call" },
  // processing
  HANDLER_TIMEOUT: { status: 504, message: 'the handler did not finish within worker.handler_timeout' },
  // confirm: the payment read back from the provider before the effect
  AMOUNT_MISMATCH: { status: 409, message: 'the amount the provider reports differs from the notification' },
  CURRENCY_MISMATCH: { status: 409, message: 'the currency the provider reports differs from the notification' },
  STATUS_MISMATCH: { status: 409, message: 'the payment status the provider reports differs from the notification' },
  PAYMENT_ID_MISSING: { status: 400, message: "the notification carries no payment id for the provider's lookup" },
  PAYMENT_LOOKUP_FAILED: { status: 502, message: "the provider's payment lookup could not be read" },
  // reconcile
  RECONCILE_NOT_CONFIGURED: { status: 400, message: 'the source has no reconcile block' },
  RECONCILE_PROVIDER_FAILED: { status: 502, message: "the provider's API could not be read" },
  RECONCILE_RUNNING: { status: 409, message: 'a reconcile run of this source is in progress' },
  // tekil simulate
  SIMULATION_UNSETTLED: { status: 504, message: 'the simulated deliveries did not settle in time' },
  // configuration and internal
  CONFIG_INVALID: { status: 500, message: 'the configuration is not valid' },
  CONFIG_NOT_FOUND: { status: 500, message: 'the configuration file cannot be read' },
  INVALID_IDENTIFIER: { status: 500, message: 'a name is not a valid SQL identifier' },
  MIGRATION_FAILED: { status: 500, message: 'a migration failed' },
  // tekil start --processes
  PROCESSES_NEED_POSTGRES: { status: 500, message: 'the embedded store is single-process: --processes above 1 needs PostgreSQL' },
  // tekil start and tekil admin-token, on the machine that runs tekil
  PORT_UNAVAILABLE: { status: 500, message: 'the port tekil is asked to listen on cannot be used' },
  ADMIN_TOKEN_NOT_FOUND: { status: 404, message: 'no admin token has been made or set yet' },
  PROCESS_CRASH_LOOP: { status: 500, message: 'a tekil process kept crashing soon after start; the supervisor gave up' },
  LEASE_LOST: { status: 409, message: 'the lease on this work was lost to another process' },
  INTERNAL: { status: 500, message: 'internal error' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

export interface TekilErrorOptions {
  cause?: unknown;
  /** What the caller can do about it, when there is one clear step (shown by the CLI, sent by the API). */
  hint?: string;
  /** Facts a program can act on (the failing path of a schema mismatch), sent by the API as `details`. */
  details?: Record<string, unknown>;
}

export class TekilError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  /** What the caller can do about it, when there is one clear step (shown by the CLI, sent by the API). */
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  /** Without a message, the catalogue's default message for the code is used. */
  constructor(code: ErrorCode, message?: string, options?: TekilErrorOptions) {
    super(message ?? errorCatalogue[code].message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TekilError';
    this.code = code;
    this.statusCode = errorCatalogue[code].status;
    this.hint = options?.hint;
    this.details = options?.details;
  }

  toJSON(): { error: ErrorCode; message: string; hint?: string; details?: Record<string, unknown> } {
    const json: { error: ErrorCode; message: string; hint?: string; details?: Record<string, unknown> } = { error: this.code, message: this.message };
    if (this.hint !== undefined) json.hint = this.hint;
    if (this.details !== undefined) json.details = this.details;
    return json;
  }
}

export function isTekilError(err: unknown, code?: ErrorCode): err is TekilError {
  return err instanceof TekilError && (code === undefined || err.code === code);
}

/** The web framework's own request errors, by their code, as catalogue codes. */
const frameworkCodes: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_VALIDATION: 'VALIDATION_FAILED',
  FST_ERR_NOT_FOUND: 'NOT_FOUND',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BODY_NOT_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BODY_NOT_JSON',
  FST_ERR_MAX_PARAM_LENGTH: 'URL_TOO_LONG',
};

/** Other client errors by status, for errors that carry a status but no code we know. */
const clientStatusCodes: Readonly<Record<number, ErrorCode>> = {
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'BODY_TOO_LARGE',
  414: 'URL_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/**
 * Any error as the TekilError a client is told about, so no code outside the catalogue reaches a
 * client. A client error from the web framework (or a library that sets `statusCode` 4xx) keeps its
 * message; anything else is INTERNAL, whose message never repeats the underlying error's text.
 */
export function toClientError(err: unknown): TekilError {
  if (isTekilError(err)) return err;
  const fe = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown; statusCode?: unknown; message?: unknown };
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code = (typeof fe.code === 'string' ? frameworkCodes[fe.code] : undefined) ?? clientStatusCodes[status] ?? 'REQUEST_MALFORMED';
    const message = typeof fe.message === 'string' && fe.message !== '' ? fe.message : undefined;
    return new TekilError(code, message, { cause: err });
  }
  const sqlState = pgErrorCode(err);
  if (sqlState !== undefined) {
    // Class 22 (data exception): a value from the request the database cannot hold (out of range, a NUL,
    // an impossible time). The routes' checks should catch these first; this is the net under them.
    // Postgres's text is not repeated: it can quote the value and names tables.
    if (sqlState.startsWith('22')) {
      return new TekilError('VALIDATION_FAILED', 'a value in the request is out of range or cannot be stored', {
        cause: err,
        hint: 'check the numbers, durations and times in the request against docs/',
      });
    }
    if (isStoreUnavailable(err)) return new TekilError('STORE_UNAVAILABLE', undefined, { cause: err });
  }
  // A pool that timed out, a connection that dropped: no SQLSTATE, and still the store being away.
  if (isStoreUnreachable(err)) return new TekilError('STORE_UNAVAILABLE', undefined, { cause: err });
  return new TekilError('INTERNAL', undefined, { cause: err });
}
