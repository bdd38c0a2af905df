import { createServer, type AddressInfo } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now, for a server the test starts itself
 * (PgBouncer, a private Postgres). A fixed or random port can land on a service of the machine's own
 * (RabbitMQ's 5672 sits among Postgres's neighbours): the kernel's choice cannot.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
