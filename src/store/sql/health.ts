import { defineStatement, type NoParams } from './statement.js';

/** The readiness probe: the store answers a statement. */
export const storeAnswers = defineStatement<NoParams, { one: number }>('tekil_store_answers', 'SELECT 1 AS one');
