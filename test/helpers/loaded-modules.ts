import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './tekil-process.js';

export interface LoadedModules {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Every module URL the process loaded, in order (ES modules and what they import). */
  urls: string[];
  /** Whether a package under node_modules was loaded (`fastify`, `@electric-sql/pglite`). */
  loadedPackage(name: string): boolean;
}

/**
 * Runs `node --import tsx <args>` in a fresh process with a loader hook that writes down every module
 * it loads, so a test can say which packages an entry point pulls in (and which it must not).
 */
export async function runListingModules(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<LoadedModules> {
  const dir = mkdtempSync(join(tmpdir(), 'tekil-loaded-'));
  const log = join(dir, 'loaded.txt');
  writeFileSync(log, '');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(process.env.TEKIL_LOADED_LOG, url + '\\n'); return next(url, context); }\n",
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const tsx = pathToFileURL(join(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href;
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', register, '--import', tsx, ...args],
      { cwd: repoRoot, env: { ...process.env, ...env, TEKIL_LOADED_LOG: log }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
  const urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { ...run, urls, loadedPackage: (name) => urls.some((url) => url.includes(`/node_modules/${name}/`)) };
}
