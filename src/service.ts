import type { Registry } from 'prom-client';
import type { TekilConfig } from './config/schema.js';
import type { Db } from './store/db.js';
import type { Logger } from './logger.js';
import type { TekilSettings } from './settings.js';

export const roleNames = ['receiver', 'worker', 'dispatcher', 'api'] as const;
export type Role = (typeof roleNames)[number];

/** What every part of a running tekil process is handed. */
export interface Context {
  config: TekilConfig;
  /** The environment as read once at start-up (database URL, data dir, secret key, admin token, log level). */
  settings: TekilSettings;
  db: Db;
  logger: Logger;
  metrics: Registry;
}

/** A background part with a lifecycle (the batcher, the worker loop, the dispatcher). */
export interface Service {
  readonly name: string;
  start(): Promise<void>;
  /** Finishes or hands back in-flight work, then resolves. Called once on shutdown. */
  stop(): Promise<void>;
}
