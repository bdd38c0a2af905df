import http from 'node:http';
import net from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { addressKey, capConnections } from './connection-cap.js';

describe('the address a connection is counted under', () => {
  it('is the IPv4 address, mapped or not', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('is the /64 of an IPv6 address, however it is written', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::5')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});

describe('closing idle connections at the cap', () => {
  it('closes the connection idle the longest, never one whose request is still arriving', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    capConnections(server, { max: 2, maxPerAddress: 2, retryAfterSec: 5 });
    const accepted: net.Socket[] = [];
    server.on('connection', (socket: net.Socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const connect = async () => {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => {});
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      return socket;
    };
    const closed = (socket: net.Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
    try {
      // A: headers still arriving (no request yet), once the server has read them.
      const arriving = await connect();
      arriving.write('GET / HTTP/1.1\r\nHost: x\r\nX-Slow: 1');
      await vi.waitFor(() => expect(accepted[0]?.bytesRead).toBeGreaterThan(0));
      // B: one request answered, then idle on a kept-alive connection.
      const idle = await connect();
      await new Promise<void>((resolve) => {
        idle.once('data', () => resolve());
        idle.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      // C, past the cap: B makes room, A is kept.
      const third = await connect();
      await closed(idle);
      expect(arriving.destroyed).toBe(false);
      third.destroy();
      arriving.destroy();
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
