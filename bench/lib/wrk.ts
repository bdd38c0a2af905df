// wrk as the load generator of the HTTP benches: a Lua script replays prepared raw requests.
import { spawn, spawnSync } from 'node:child_process';

export interface WrkResult {
  requests: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  errors: string;
}

/** Exits with an install hint when wrk is missing. */
export function requireWrk(): void {
  if (spawnSync('wrk', ['--version']).error) {
    process.stderr.write('wrk is not installed. Install it with:\n  apt-get update && apt-get install -y wrk\n');
    process.exit(1);
  }
}

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 'ms' ? v : m[2] === 's' ? v * 1000 : v * 60_000;
}

/**
 * A Lua script that reads `dataFile` (records of `<length>\n<raw request>`) and sends them in turn,
 * starting at the offset given as the script's argument (so a measured run does not replay the warm-up's).
 */
export function replayScript(dataFile: string): string {
  return `
local reqs, n, i = {}, 0, 0
function init(args)
  local f = assert(io.open(${JSON.stringify(dataFile)}, "rb"))
  local data = f:read("*a")
  f:close()
  local pos = 1
  while pos <= #data do
    local nl = data:find("\\n", pos, true)
    local len = tonumber(data:sub(pos, nl - 1))
    n = n + 1
    reqs[n] = data:sub(nl + 1, nl + len)
    pos = nl + 1 + len
  end
  i = (tonumber(args[1]) or 0) % n
end
function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
`;
}

/**
 * Runs wrk without blocking this process's event loop: the servers' output pipes are read by this
 * process, and a server whose pipe is full stalls on its next log line.
 */
export async function runWrk(options: { port: number; script: string; seconds: number; connections: number; offset: number }): Promise<WrkResult> {
  const { port, script, seconds, connections, offset } = options;
  const child = spawn(
    'wrk',
    ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-s', script, `http://127.0.0.1:${port}/`, '--', String(offset)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (status !== 0) throw new Error(`wrk failed: ${err || out}`);
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0);
  // wrk's Requests/sec counts every answer, refusals too: the rate is the 2xx answers' over the run
  // (wrk's total over its own measured duration), so a server that answers 503 fast does not score.
  const requests = num(/(\d+) requests in/);
  const non2xx = num(/Non-2xx or 3xx responses:\s+(\d+)/);
  const allRps = num(/Requests\/sec:\s+([\d.]+)/);
  return {
    requests,
    rps: requests > 0 ? (allRps * (requests - non2xx)) / requests : 0,
    p50ms: toMs(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? ''),
    p99ms: toMs(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? ''),
    non2xx,
    errors: /Socket errors:[^\n]*/.exec(out)?.[0] ?? '',
  };
}
