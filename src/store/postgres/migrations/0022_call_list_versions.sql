-- A version per account that changes with every write to that account's calls, in the writing
-- transaction: a reader that sees the same version as when it rendered a page of the account's
-- calls list sees the same rows, so the rendered page can be served again (src/http/page-cache.ts)
-- after one primary-key read instead of reading and rendering the rows. Kept beside the count of
-- 0019 by the same statement-level triggers (one upsert per statement and account).
ALTER TABLE call_counts ADD COLUMN v bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION call_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO call_counts AS c (account_sid, n, v)
    SELECT account_sid, count(*), 1 FROM inserted GROUP BY account_sid ORDER BY account_sid
  ON CONFLICT (account_sid) DO UPDATE SET n = c.n + EXCLUDED.n, v = c.v + 1;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION call_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE call_counts c SET n = c.n - d.n, v = c.v + 1
    FROM (SELECT account_sid, count(*) AS n FROM deleted GROUP BY account_sid ORDER BY account_sid) d
    WHERE c.account_sid = d.account_sid;
  RETURN NULL;
END $$;

-- Only rows whose listed members changed count: the claim columns (claimed_by, claimed_until),
-- renewed every few seconds for live calls, are not part of the list, nor are the kept
-- StatusCallback columns. A statement that changes nothing visible bumps nothing.
CREATE FUNCTION call_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE call_counts c SET v = c.v + 1
    FROM (
      SELECT DISTINCT a.account_sid FROM (
        SELECT o.account_sid AS old_account, n.account_sid AS new_account
        FROM old_rows o JOIN new_rows n ON n.sid = o.sid
        WHERE (o.parent_call_sid, o.account_sid, o.to_address, o.from_address, o.phone_number_sid, o.status,
               o.start_time, o.end_time, o.duration, o.price, o.price_unit, o.direction, o.answered_by,
               o.api_version, o.forwarded_from, o.caller_name, o.sip_call_id, o.sip_response_code,
               o.date_created, o.date_updated)
          IS DISTINCT FROM
              (n.parent_call_sid, n.account_sid, n.to_address, n.from_address, n.phone_number_sid, n.status,
               n.start_time, n.end_time, n.duration, n.price, n.price_unit, n.direction, n.answered_by,
               n.api_version, n.forwarded_from, n.caller_name, n.sip_call_id, n.sip_response_code,
               n.date_created, n.date_updated)
      ) changed, LATERAL (VALUES (changed.old_account), (changed.new_account)) a (account_sid)
      ORDER BY a.account_sid
    ) d
    WHERE c.account_sid = d.account_sid;
  RETURN NULL;
END $$;

-- TRUNCATE fires no row or statement INSERT/DELETE trigger: every count restarts and every
-- version moves.
CREATE FUNCTION call_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE call_counts SET n = 0, v = v + 1;
  RETURN NULL;
END $$;

LOCK TABLE calls IN SHARE ROW EXCLUSIVE MODE;
CREATE TRIGGER calls_counted_update AFTER UPDATE ON calls
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION call_counts_updated();
CREATE TRIGGER calls_counted_truncate AFTER TRUNCATE ON calls
  FOR EACH STATEMENT EXECUTE FUNCTION call_counts_truncated();
