// tsc does not copy non-TS assets; migrations are plain .sql files read at run time.
import { cpSync, mkdirSync } from 'node:fs';
mkdirSync('dist/store/migrations', { recursive: true });
cpSync('src/store/migrations', 'dist/store/migrations', { recursive: true });
