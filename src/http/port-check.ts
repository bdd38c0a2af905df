import { createServer } from 'node:net';
import { TekilError } from '../errors.js';

/** A port tekil is about to listen on, and where its number came from, for a message that says what to change. */
export interface PortToBind {
  host: string;
  port: number;
  /** What set it, e.g. `--port`, `PORT`, `server.port`; named in the message. */
  from: string;
}

/** The HTTP port and what chose it: the caller's option (`--port`), else PORT, else server.port. */
export function portToBind(options: { port?: number | undefined }, envPort: number | undefined, configPort: number): { port: number; from: string } {
  if (options.port !== undefined) return { port: options.port, from: '--port' };
  if (envPort !== undefined) return { port: envPort, from: 'PORT' };
  return { port: configPort, from: 'server.port' };
}

/**
 * The plain refusal for a port that cannot be bound: which port, on which address, and which setting
 * chooses another. `err` is the socket's error (EADDRINUSE, EACCES); other errors are not this.
 */
export function portUnavailable(target: PortToBind, err: unknown): TekilError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return undefined;
  const why = code === 'EADDRINUSE' ? 'is already in use by another process' : 'needs privileges this process does not have';
  const where =
    target.from === 'server.metrics_port' ? 'server.metrics_port in tekil.yaml' : '--port N, PORT=N (environment or .env), or server.port in tekil.yaml';
  return new TekilError('PORT_UNAVAILABLE', `port ${target.port} on ${target.host} (from ${target.from}) ${why}`, {
    hint: `stop what listens there, or choose another port: ${where}`,
    cause: err,
  });
}

/**
 * Binds each port for an instant and lets it go, so `tekil start` refuses a taken port before it opens
 * the store and runs migrations (a start that would fail anyway changes nothing). Port 0 (any free
 * port) is always free. The real listen can still lose a race; runtime maps that error the same way.
 */
export async function checkPortsFree(targets: readonly PortToBind[]): Promise<void> {
  for (const target of targets) {
    if (target.port === 0) continue;
    const probe = createServer();
    try {
      await new Promise<void>((resolve, reject) => probe.once('error', reject).listen({ host: target.host, port: target.port, exclusive: true }, resolve));
    } catch (err) {
      throw portUnavailable(target, err) ?? err;
    } finally {
      await new Promise((resolve) => probe.close(resolve));
    }
  }
}
