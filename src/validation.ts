import type { z } from 'zod';

/**
 * One line per problem, each led by the path it concerns (`sources.shop.secrets: expected …`), the
 * form every surface (config files, admin API, CLI flags) reports validation failures in.
 */
export function describeZodIssues(error: z.ZodError, root = '(root)', separator = '; '): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : root}: ${issue.message}`).join(separator);
}
