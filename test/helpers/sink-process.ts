import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/**
 * A sink in its own process, for measuring a sender's pace: timestamps taken in the sender's process
 * would carry its event-loop lag, and show requests sent apart as arriving together. It answers 500
 * while failing; `recover(after)` makes it fail `after` more requests, then answer 204.
 */
export interface SinkProcess {
  url: string;
  /** Arrival times (epoch ms) of every request so far. */
  times(): Promise<number[]>;
  recover(failMore: number): Promise<void>;
  close(): Promise<void>;
}

const SCRIPT = `
const http = require('node:http');
const times = [];
let failMore = Infinity;
const server = http.createServer((req, res) => {
  if (req.url === '/times') return res.end(JSON.stringify(times));
  if (req.url.startsWith('/recover/')) { failMore = Number(req.url.slice(9)); return res.end('ok'); }
  req.resume();
  req.on('end', () => {
    times.push(Date.now());
    if (failMore > 0) { failMore--; res.writeHead(500); return res.end('down'); }
    res.writeHead(204); res.end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export async function startSinkProcess(): Promise<SinkProcess> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [first] = (await once(child.stdout!, 'data')) as [Buffer];
  const base = `http://127.0.0.1:${Number(first.toString().trim())}`;
  const get = async (path: string) => (await fetch(base + path)).text();
  return {
    url: `${base}/hook`,
    times: async () => JSON.parse(await get('/times')) as number[],
    recover: async (failMore) => void (await get(`/recover/${failMore}`)),
    async close() {
      child.kill();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}
