export { checkIds, checkFixes, checkTitles, type CheckId, type CheckResult, type CheckStatus, type Figures } from './checks.js';
export { runProve, parseCheckList, type ProveReport, type Selection } from './run.js';
export { defaultProveOptions, type ProveOptions } from './session.js';
export { formatJunit, formatTable, formatRow, formatSummary } from './report.js';
export type { Effect } from './http.js';
export { providerListExpectations, type ProviderListOptions } from './provider-list.js';
