/**
 * The one catalogue of tekil's coded errors. Each code has a fixed HTTP status so every surface
 * (receiver, admin API, CLI) reports the same failure the same way.
 */
export const errorCatalogue = {
  // receiving
  SOURCE_NOT_FOUND: 404,
  BODY_TOO_LARGE: 413,
  SIGNATURE_MISSING: 401,
  SIGNATURE_MALFORMED: 401,
  SIGNATURE_INVALID: 401,
  TIMESTAMP_MISSING: 401,
  TIMESTAMP_MALFORMED: 401,
  TIMESTAMP_OUT_OF_TOLERANCE: 401,
  EVENT_ID_MISSING: 400,
  EVENT_ID_INVALID: 400,
  BODY_NOT_JSON: 400,
  STORE_UNAVAILABLE: 503,
  STORE_REJECTED: 500,
  OVERLOADED: 503,
  SHUTTING_DOWN: 503,
  // admin API
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  CONFLICT: 409,
  VALIDATION_FAILED: 400,
  FORBIDDEN_DESTINATION: 400,
  // sending
  SECRET_KEY_MISMATCH: 500,
  // processing
  HANDLER_TIMEOUT: 504,
  // configuration and internal
  CONFIG_INVALID: 500,
  CONFIG_NOT_FOUND: 500,
  INVALID_IDENTIFIER: 500,
  MIGRATION_FAILED: 500,
  LEASE_LOST: 409,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export class TekilError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  /** What the caller can do about it, when there is one clear step (shown by the CLI, sent by the API). */
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TekilError';
    this.code = code;
    this.statusCode = errorCatalogue[code];
    this.hint = options?.hint;
  }

  toJSON(): { error: ErrorCode; message: string; hint?: string } {
    return this.hint === undefined ? { error: this.code, message: this.message } : { error: this.code, message: this.message, hint: this.hint };
  }
}

export function isTekilError(err: unknown, code?: ErrorCode): err is TekilError {
  return err instanceof TekilError && (code === undefined || err.code === code);
}
