// bench:peers' sink for the sending path, in its own process: answers 200 at once, and for a body that
// carries its enqueue time (`"t0":<ms since the epoch>`, see latency.ts) keeps the time from that enqueue
// to the end of this request's body. The bench asks over IPC: 'count' (requests, timed ones) or 'take'
// (the timed latencies, which it then forgets).
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

let received = 0;
let latencies: number[] = [];
const t0Pattern = /"t0":(\d+(?:\.\d+)?)/;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (d: Buffer) => chunks.push(d));
  req.on('end', () => {
    const t1 = performance.timeOrigin + performance.now();
    received++;
    const m = t0Pattern.exec(Buffer.concat(chunks).toString('latin1'));
    if (m) latencies.push(t1 - Number(m[1]));
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`${address.port}\n`);
});
process.on('message', (cmd: string) => {
  if (cmd === 'take') {
    process.send?.({ received, latencies });
    latencies = [];
  } else process.send?.({ received, timed: latencies.length });
});
