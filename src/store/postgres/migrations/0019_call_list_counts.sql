-- The calls list (newest first, 50 a page) answers with the account's exact total on every page.
-- Counting the account's rows on every request costs a scan of all of them; the count is kept
-- per account instead, by statement-level triggers (one upsert per INSERT statement and account,
-- so the batched inserts of the call writer add one row lock per batch, not one per call). Rows are
-- locked in account order, so two concurrent batches never deadlock on them. A call's account never
-- changes (no UPDATE trigger: it would run on every status write).
CREATE TABLE call_counts (
  account_sid  text PRIMARY KEY,
  n            bigint NOT NULL
);

CREATE FUNCTION call_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO call_counts AS c (account_sid, n)
    SELECT account_sid, count(*) FROM inserted GROUP BY account_sid ORDER BY account_sid
  ON CONFLICT (account_sid) DO UPDATE SET n = c.n + EXCLUDED.n;
  RETURN NULL;
END $$;

CREATE FUNCTION call_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE call_counts c SET n = c.n - d.n
    FROM (SELECT account_sid, count(*) AS n FROM deleted GROUP BY account_sid ORDER BY account_sid) d
    WHERE c.account_sid = d.account_sid;
  RETURN NULL;
END $$;

-- Taken in the migration's transaction: the table lock holds writers off until the counts and the
-- triggers are in place together.
LOCK TABLE calls IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO call_counts (account_sid, n) SELECT account_sid, count(*) FROM calls GROUP BY account_sid;
CREATE TRIGGER calls_counted_insert AFTER INSERT ON calls
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION call_counts_inserted();
CREATE TRIGGER calls_counted_delete AFTER DELETE ON calls
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION call_counts_deleted();

-- The list's order (date_created DESC, sid DESC) read straight from the index: no sort step.
CREATE INDEX calls_account_list_idx ON calls (account_sid, date_created DESC, sid DESC);
DROP INDEX calls_account_created_idx;
