import { TekilError } from '../errors.js';

/** A replay of something whose body retention removed: refused, with what can still be done. */
export function trimmedError(what: string, trimmedAt: Date): TekilError {
  return new TekilError('BODY_TRIMMED', `${what}: body trimmed by retention on ${trimmedAt.toISOString()}; there is nothing left to replay`, {
    hint: 'the record is kept so copies stay duplicates; to run it again, have the provider send it anew, and keep bodies longer (retention.bodies)',
  });
}

/** A replay of something whose body was erased on request (docs/erasure.md): refused, for good. */
export function erasedError(what: string, erasedAt: Date): TekilError {
  return new TekilError('ERASED', `${what}: body erased on request on ${erasedAt.toISOString()}; there is nothing left to replay`, {
    hint: 'the record is kept so copies stay duplicates; an erased delivery is never sent or processed again',
  });
}
