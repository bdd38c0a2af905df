import { describe, expect, it } from 'vitest';
import { sanitizeError } from './sanitize-error.js';
import { PermanentError } from './handlers.js';
import { TekilError } from '../errors.js';

/** last_error and the attempt log keep a summary an operator may read anywhere: never a body or a secret. */
describe('sanitizeError: the error summary kept for an attempt', () => {
  const secret = 'whsec_dGVzdC1zZWNyZXQ=';
  const body = '{"event_id":"evt_1","card":"4111111111111111"}';

  it('keeps the name, the code and the message on one line, without the stack', () => {
    const err = new TekilError('HANDLER_TIMEOUT', 'handler timed out\nafter   300 ms');
    expect(sanitizeError(err, { secrets: [] })).toBe('TekilError [HANDLER_TIMEOUT]: handler timed out after 300 ms');
    expect(sanitizeError(new PermanentError('bad amount'), { secrets: [] })).toBe('PermanentError: bad amount');
    expect(sanitizeError(new Error('boom'), { secrets: [] })).not.toContain(' at ');
  });

  it('cuts out the source secrets and the delivery body when a message quotes them', () => {
    const err = new Error(`signing with ${secret} failed for ${body}`);
    const text = sanitizeError(err, { secrets: [secret], body });
    expect(text).toBe('Error: signing with [redacted] failed for [body]');
    expect(text).not.toContain('4111');
  });

  it('leaves very short secrets and bodies alone (cutting them would shred ordinary words)', () => {
    expect(sanitizeError(new Error('id abc is bad'), { secrets: ['abc'], body: '{}' })).toBe('Error: id abc is bad');
  });

  it('bounds the summary at 500 characters', () => {
    const text = sanitizeError(new Error('x'.repeat(2_000)), { secrets: [] });
    expect(text).toHaveLength(500);
    expect(text.endsWith('…')).toBe(true);
  });

  it('summarises what is not an Error too', () => {
    expect(sanitizeError('plain string', { secrets: [] })).toBe('Error: plain string');
    expect(sanitizeError({ code: 'ECONNRESET', message: 'socket hang up' }, { secrets: [] })).toBe('Error [ECONNRESET]: socket hang up');
  });
});
