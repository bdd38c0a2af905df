export { loadConfigFile, parseConfig, interpolateEnv, defineConfig } from './load.js';
export { configSchema, type TekilConfig, type ConfigInput } from './schema.js';
export { sourceSchema, schemeNames, type SchemeName, type SourceConfig, type HmacSchemeOptions } from './source.js';
export { parseDuration, parseSize } from './units.js';
