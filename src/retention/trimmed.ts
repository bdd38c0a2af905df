import { TekilError } from '../errors.js';

/** A replay of something whose body retention removed: refused, with what can still be done. */
export function trimmedError(what: string, trimmedAt: Date): TekilError {
  return new TekilError('BODY_TRIMMED', `${what}: body trimmed by retention on ${trimmedAt.toISOString()}; there is nothing left to replay`, {
    hint: 'the record is kept so copies stay duplicates; to run it again, have the provider send it anew, and keep bodies longer (retention.bodies)',
  });
}
