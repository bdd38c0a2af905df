import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root, so the CLI and module paths work whatever the working directory. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface TekilProcess {
  child: ChildProcess;
  /** The URL the banner printed (the shared one under --processes N). */
  url: string;
  /** Everything written to stdout and stderr so far (logs, the banner). */
  output(): string;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<number | string | null>;
  /** SIGTERM (by default), then waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
}

/**
 * `tekil start <args>` from the TypeScript CLI (through tsx) in its own process; resolves once it
 * prints "tekil listening on <url>". Rejects with its output when it exits first or takes over
 * `timeoutMs` (start-up includes compiling through tsx, slow on a busy machine).
 */
export function spawnTekil(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<TekilProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start', ...args], {
    cwd: repoRoot,
    env: { ...process.env, TEKIL_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tekil start ${args.join(' ')} did not listen within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = () => {
      const m = /tekil listening on (http:\/\/[\d.:]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onData);
      resolve({
        child,
        url: m[1]!,
        output: () => out,
        exited,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    // The banner is on stderr (stdout carries the log lines).
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`tekil start ${args.join(' ')} exited (${code}) before listening:\n${out}`));
    });
  });
}
