// tsc does not copy non-TS assets; migrations are plain .sql files read at run time.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
mkdirSync('dist/store/migrations', { recursive: true });
cpSync('src/store/migrations', 'dist/store/migrations', { recursive: true });
// The last step of a build: scripts/build-if-stale.mjs compares the sources against this file's time.
writeFileSync('dist/.build-stamp', `${new Date().toISOString()}\n`);
