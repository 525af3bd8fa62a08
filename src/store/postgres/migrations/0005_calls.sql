-- Call records (spec §Call). One row per call leg; written when the call is created and updated on
-- every status change; the terminal update is the CDR.
CREATE TABLE calls (
  sid               text PRIMARY KEY,
  parent_call_sid   text,
  account_sid       text NOT NULL REFERENCES accounts (sid),
  to_address        text NOT NULL,
  from_address      text NOT NULL,
  phone_number_sid  text,
  status            text NOT NULL CHECK (status IN ('queued', 'ringing', 'in-progress', 'completed', 'failed', 'busy', 'no-answer', 'canceled')),
  start_time        timestamptz,
  end_time          timestamptz,
  duration          integer,
  price             numeric(10, 4),
  price_unit        text NOT NULL DEFAULT 'USD',
  direction         text NOT NULL CHECK (direction IN ('inbound', 'outbound-api', 'outbound-dial')),
  answered_by       text,
  api_version       text NOT NULL DEFAULT '2012-04-24',
  forwarded_from    text,
  caller_name       text,
  sip_call_id       text,
  date_created      timestamptz NOT NULL DEFAULT now(),
  date_updated      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX calls_account_created_idx ON calls (account_sid, date_created DESC);
CREATE INDEX calls_parent_idx ON calls (parent_call_sid);
