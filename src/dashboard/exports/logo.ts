import { request } from 'undici';
import type { Logger } from '../../logger.js';

/** A logo bigger than this is not put in a report (a page header needs a few kilobytes). */
export const LOGO_MAX_BYTES = 1024 * 1024;
const TIMEOUT_MS = 5000;
/** A logo read is kept this long; a failed read is tried again after a minute. */
const KEEP_MS = 3_600_000;
const RETRY_MS = 60_000;

/** What pdfkit can draw: PNG and JPEG, by their first bytes (a server's content type may say anything). */
export function logoKind(bytes: Buffer): 'png' | 'jpeg' | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  return undefined;
}

export interface LogoOptions {
  /** `portal.logo_url`: an https URL. */
  url: string | undefined;
  logger: Logger;
}

/**
 * The provider's logo for reports, read from `portal.logo_url` on the first export that needs it and
 * kept in memory for an hour. An export never fails for its logo: one that cannot be read in 5 s, is
 * over 1 MiB, or is neither PNG nor JPEG (an SVG: pdfkit cannot draw it) is left out, with a warning.
 */
export function logoLoader(options: LogoOptions): () => Promise<Buffer | undefined> {
  const { url, logger } = options;
  let kept: { bytes: Buffer | undefined; until: number } | undefined;
  let reading: Promise<Buffer | undefined> | undefined;
  const read = async (): Promise<Buffer | undefined> => {
    if (!url) return undefined;
    try {
      // undici follows no redirect unless told to: a logo is read from the address configured.
      const res = await request(url, { signal: AbortSignal.timeout(TIMEOUT_MS), headers: { accept: 'image/png, image/jpeg' } });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > LOGO_MAX_BYTES) {
          res.body.destroy();
          throw new Error(`the logo is over ${LOGO_MAX_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      if (res.statusCode !== 200) throw new Error(`the logo's server answered ${res.statusCode}`);
      const bytes = Buffer.concat(chunks);
      if (!logoKind(bytes)) throw new Error('the logo is neither PNG nor JPEG (a report can show only those)');
      return bytes;
    } catch (err) {
      logger.warn({ err, url }, 'the portal logo cannot be put in reports; they show the name only');
      return undefined;
    }
  };
  return async () => {
    if (kept && kept.until > Date.now()) return kept.bytes;
    reading ??= read().then((bytes) => {
      kept = { bytes, until: Date.now() + (bytes ? KEEP_MS : RETRY_MS) };
      reading = undefined;
      return bytes;
    });
    return reading;
  };
}
