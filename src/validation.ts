import type { z } from 'zod';
import { TekilError } from './errors.js';

/**
 * One line per problem, each led by the path it concerns (`sources.shop.secrets: expected …`), the
 * form every surface (config files, admin API, CLI flags) reports validation failures in.
 */
export function describeZodIssues(error: z.ZodError, root = '(root)', separator = '; '): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : root}: ${issue.message}`).join(separator);
}

/** Parses input from a request with a zod schema; a mismatch is a 400 VALIDATION_FAILED naming each path. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw new TekilError('VALIDATION_FAILED', describeZodIssues(result.error, '(body)'));
  return result.data;
}
