-- A session made with the admin token remembers which one (its SHA-256): when TEKIL_ADMIN_TOKEN changes,
-- every session made with the old token is over, as the old token is. Sessions made before this column
-- have none, and end too: their holders sign in again.
ALTER TABLE dashboard_sessions ADD COLUMN admin_token_hash text;
