import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/**
 * One HTTP/1.1 request written byte for byte on a fresh socket: header lines exactly as given
 * (repeated names, empty or odd values), which HTTP clients normalise or refuse.
 */
export async function rawRequest(
  baseUrl: string,
  options: {
    method?: string;
    path: string;
    headers: ReadonlyArray<readonly [string, string]>;
    body?: string | Buffer;
    /** The local address to send from (127.0.0.x are distinct client addresses on Linux loopback). */
    from?: string;
  },
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const body = options.body === undefined ? Buffer.alloc(0) : Buffer.from(options.body);
  const head = [
    `${options.method ?? 'POST'} ${options.path} HTTP/1.1`,
    `Host: ${url.host}`,
    'Connection: close',
    `Content-Length: ${body.length}`,
    ...options.headers.map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  const socket = net.connect({ port: Number(url.port), host: url.hostname, ...(options.from !== undefined ? { localAddress: options.from } : {}) });
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', resolve);
    socket.on('error', reject);
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  });
  const text = Buffer.concat(chunks).toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const headers = text.slice(0, split);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
  return { status, headers, body: text.slice(split + 4) };
}

/**
 * Writes `bytes` on a fresh socket as they are (a request the HTTP parser may refuse, or only part of
 * one) and resolves with everything the server sent once it closes the connection.
 */
export async function rawExchange(baseUrl: string, bytes: string | Buffer): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    // A server that answers and closes while unread bytes remain makes the kernel reset the
    // connection: the answer read so far is what counts.
    socket.on('error', () => {});
    socket.on('close', () => resolve());
    socket.write(bytes);
  });
  const text = Buffer.concat(chunks).toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const headers = split < 0 ? text : text.slice(0, split);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
  return { status, headers, body: split < 0 ? '' : text.slice(split + 4) };
}

/**
 * One request whose body is sent in ten pieces spread over `takesMs` (a sender on a slow link), and
 * its answer.
 */
export async function slowUpload(
  baseUrl: string,
  options: { path: string; headers: ReadonlyArray<readonly [string, string]>; body: string | Buffer; takesMs: number },
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const body = Buffer.from(options.body);
  const head = [
    `POST ${options.path} HTTP/1.1`,
    `Host: ${url.host}`,
    'Connection: close',
    `Content-Length: ${body.length}`,
    ...options.headers.map(([n, v]) => `${n}: ${v}`),
    '',
    '',
  ].join('\r\n');
  const socket = net.connect(Number(url.port), url.hostname);
  const chunks: Buffer[] = [];
  const closed = new Promise<void>((resolve) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => {});
    socket.on('close', () => resolve());
  });
  socket.write(head);
  const pieces = 10;
  const size = Math.ceil(body.length / pieces);
  for (let i = 0; i < pieces; i++) {
    await new Promise((r) => setTimeout(r, options.takesMs / pieces));
    if (socket.writable) socket.write(body.subarray(i * size, (i + 1) * size));
  }
  await closed;
  const text = Buffer.concat(chunks).toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  return { status, headers: split < 0 ? text : text.slice(0, split), body: split < 0 ? '' : text.slice(split + 4) };
}
