import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DestinationGuard } from './destination-guard.js';
import { HttpPoster } from './post.js';

/** The guard's verdicts on addresses and IP-literal URLs: no network involved. */
describe('destination guard', () => {
  it('refuses private, loopback, link-local and mapped addresses unless allowed', () => {
    const guard = new DestinationGuard();
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
    ]) {
      expect(guard.permits(ip), ip).toBe(false);
    }
    for (const ip of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111']) expect(guard.permits(ip), ip).toBe(true);
    const allowing = new DestinationGuard(['127.0.0.0/8', '10.0.0.0/8']);
    expect(allowing.permits('127.0.0.1')).toBe(true);
    expect(allowing.permits('10.9.9.9')).toBe(true);
    expect(allowing.permits('192.168.1.1')).toBe(false);
  });

  it('refuses IPv4-compatible, IPv4-mapped and 6to4 IPv6 forms of private addresses, at creation too', async () => {
    const guard = new DestinationGuard();
    for (const ip of ['::7f00:1', '::127.0.0.1', '::a00:1', '::ffff:7f00:1', '::ffff:0:a00:1', '2002:7f00:1::1', '2002:c0a8:101::1']) {
      expect(guard.permits(ip), ip).toBe(false);
    }
    for (const url of ['http://[::127.0.0.1]:9/', 'http://[::ffff:127.0.0.1]:9/', 'http://[::ffff:7f00:1]:9/', 'http://[2002:7f00:1::1]:9/']) {
      await expect(guard.checkUrl(url), url).rejects.toMatchObject({ code: 'FORBIDDEN_DESTINATION' });
    }
    // An allowed IPv4 network also allows its mapped form.
    expect(new DestinationGuard(['127.0.0.0/8']).permits('::ffff:7f00:1')).toBe(true);
  });

  it('names the setting to change, by its full path, in the refusal and its hint', () => {
    const forward = new DestinationGuard([], { setting: ['sources', 'shop', 'forward', 'allow_networks'] });
    const refusal = forward.refusal('app.internal', '169.254.169.254');
    expect(refusal.message).toMatch(/allow it with sources\.shop\.forward\.allow_networks\)/);
    expect(refusal.hint).toBe('to allow it, add to the configuration: sources: { shop: { forward: { allow_networks: ["169.254.169.254/32"] } } }');
    expect(new DestinationGuard().refusal('h', '::1').hint).toBe('to allow it, add to the configuration: sending: { allow_networks: ["::1/128"] }');
    // A source name YAML would read as something else than that string is quoted.
    expect(new DestinationGuard([], { setting: ['sources', 'true', 'forward', 'allow_networks'] }).refusal('h', '10.1.2.3').hint).toContain(
      'sources: { "true": { forward:',
    );
  });

  it('a hint for a list in force repeats it: pasting the line adds the network and keeps the others (the forward defaults too)', () => {
    const defaults = ['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'];
    const forward = new DestinationGuard(defaults, { setting: ['sources', 'shop', 'forward', 'allow_networks'] });
    expect(forward.refusal('metadata', '169.254.169.254').hint).toBe(
      'to allow it, set in the configuration (a list replaces the networks allowed now, so this one repeats them): ' +
        'sources: { shop: { forward: { allow_networks: ["127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "169.254.169.254/32"] } } }',
    );
    expect(new DestinationGuard(['10.0.0.0/8']).refusal('h', '127.0.0.1').hint).toMatch(
      /sending: \{ allow_networks: \["10\.0\.0\.0\/8", "127\.0\.0\.0\/8"\] \}$/,
    );
  });

  it('refuses a network that is not one with CONFIG_INVALID naming the entry, never a bare RangeError', () => {
    const setting = ['sources', 'shop', 'forward', 'allow_networks'];
    for (const bad of ['nonsense/8', '10.0.0.0/33', '::1/200', '300.1.1.1/8']) {
      expect(() => new DestinationGuard(['127.0.0.0/8', bad], { setting }), bad).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining(`sources.shop.forward.allow_networks.1: "${bad}"`) }),
      );
    }
  });
  it('refuses localhost names with a final dot and Teredo addresses, at creation and at connect time', async () => {
    const guard = new DestinationGuard();
    const teredo = '2001:0:4136:e378:8000:63bf:3fff:fdd2';
    expect(guard.permits(teredo)).toBe(false);
    expect(guard.permits('2001:db8::1')).toBe(true); // outside 2001::/32
    for (const url of ['http://localhost./hooks', 'http://LOCALHOST.:8080/', 'http://app.localhost./', 'http://app.localhost/', `http://[${teredo}]/`]) {
      await expect(guard.checkUrl(url), url).rejects.toMatchObject({ code: 'FORBIDDEN_DESTINATION' });
    }
    // Connect time: the lookup sockets use refuses the name without asking DNS.
    const looked = await new Promise<Error | null>((resolve) => guard.lookup('localhost.', {}, (err) => resolve(err)));
    expect(looked).toMatchObject({ code: 'FORBIDDEN_DESTINATION' });
    // A real request to a real server listening on loopback never gets there.
    let reached = 0;
    const server = createServer((_req, res) => {
      reached++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const poster = new HttpPoster({ guard });
    try {
      for (const url of [`http://localhost.:${port}/`, `http://[${teredo}]:${port}/`]) {
        const result = await poster.post({ url, headers: {}, body: Buffer.from('{}'), timeoutMs: 2_000, keepBytes: 0 });
        expect(result.ok, url).toBe(false);
        expect(result.ok ? '' : result.error, url).toMatch(/private, loopback or link-local/);
      }
      expect(reached).toBe(0);
      // Allowed loopback: the same name is let through.
      expect(await new DestinationGuard(['127.0.0.0/8']).checkUrl('http://localhost./hooks')).toBeInstanceOf(URL);
    } finally {
      await poster.close();
      await new Promise((r) => server.close(r));
    }
  });
});
