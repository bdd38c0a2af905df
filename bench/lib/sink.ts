// The benches' HTTP sink (bench/dispatch-sink.ts) in its own process, so it does not share the
// sender's CPU: it answers 200 at once to every request.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export async function startSinkProcess(): Promise<{ url: string; stop(): void }> {
  const child = fork(fileURLToPath(new URL('../dispatch-sink.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}/hook`, stop: () => child.kill() };
}
