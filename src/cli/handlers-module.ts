import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TekilError } from '../errors.js';
import { HandlerRegistry } from '../worker/handlers.js';

/**
 * `tekil start --handlers ./handlers.js`: the worker's in-process handlers from a module of the
 * application's, so the CLI (and every process of `--processes N`) can run them. The module's default
 * export (or its `handlers` export) is a `HandlerRegistry` made with `defineHandlers()`.
 */
export async function loadHandlersModule(path: string): Promise<HandlerRegistry> {
  const url = pathToFileURL(resolve(path)).href;
  let mod: { default?: unknown; handlers?: unknown };
  try {
    mod = (await import(url)) as { default?: unknown; handlers?: unknown };
  } catch (err) {
    throw new TekilError('CONFIG_INVALID', `--handlers: cannot load ${path}`, {
      cause: err,
      hint: 'the path is relative to the working directory; a .ts module needs tsx (node --import tsx)',
    });
  }
  const registry = mod.default ?? mod.handlers;
  if (!(registry instanceof HandlerRegistry)) {
    throw new TekilError('CONFIG_INVALID', `--handlers: ${path} exports no handler registry`, {
      hint: 'export default defineHandlers().on(source, type, fn), with defineHandlers imported from tekil',
    });
  }
  return registry;
}
