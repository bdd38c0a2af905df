import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createTerminalAwareLogger } from '../src/logger.js';

function collector(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** `tekil start`'s log lines: readable on a terminal, JSON elsewhere; redacted either way. */
describe('the start logger', () => {
  it('on a terminal: one readable line per entry (level, message, fields), not JSON, secrets redacted', async () => {
    const out = collector();
    const logger = await createTerminalAwareLogger({ level: 'info' }, { isTerminal: true, stream: out.stream });
    logger.info({ applied: ['001_init.sql'], secret: 'whsec_do_not_print' }, 'migrations applied');
    const text = out.text();
    expect(text).toMatch(/INFO.*migrations applied/);
    expect(text).toContain('001_init.sql');
    expect(text).not.toContain('whsec_do_not_print');
    expect(() => JSON.parse(text.trim())).toThrow();
  });

  it('elsewhere: JSON lines', async () => {
    const out = collector();
    const logger = await createTerminalAwareLogger({ level: 'info' }, { isTerminal: false, stream: out.stream });
    logger.info({ secret: 'whsec_do_not_print' }, 'listening');
    const line = JSON.parse(out.text().trim()) as { msg: string; secret: string; level: number };
    expect(line).toMatchObject({ msg: 'listening', secret: '[redacted]', level: 30 });
  });
});
