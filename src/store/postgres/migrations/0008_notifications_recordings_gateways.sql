-- Notifications (spec §Notification), recordings (§Recording) and gateways (§Gateway).
CREATE TABLE notifications (
  sid                text PRIMARY KEY,
  account_sid        text NOT NULL REFERENCES accounts (sid),
  call_sid           text,
  api_version        text,
  log                smallint NOT NULL CHECK (log IN (0, 1)),
  error_code         integer NOT NULL,
  more_info          text NOT NULL,
  message_text       text NOT NULL,
  message_date       timestamptz NOT NULL DEFAULT now(),
  request_url        text,
  request_method     text,
  request_variables  text,
  response_headers   text,
  response_body      text,
  date_created       timestamptz NOT NULL DEFAULT now(),
  date_updated       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_account_idx ON notifications (account_sid, date_created);
CREATE INDEX notifications_call_idx ON notifications (call_sid);

CREATE TABLE recordings (
  sid            text PRIMARY KEY,
  account_sid    text NOT NULL REFERENCES accounts (sid),
  call_sid       text,
  duration       numeric(10, 3) NOT NULL,
  api_version    text NOT NULL DEFAULT '2012-04-24',
  size_bytes     bigint NOT NULL,
  date_created   timestamptz NOT NULL DEFAULT now(),
  date_updated   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX recordings_account_idx ON recordings (account_sid, date_created);
CREATE INDEX recordings_call_idx ON recordings (call_sid);

CREATE TABLE gateways (
  sid            text PRIMARY KEY,
  account_sid    text NOT NULL REFERENCES accounts (sid),
  friendly_name  text NOT NULL,
  user_name      text,
  -- Kept retrievable: the service answers the gateway's digest challenges with it (see docs/decisions.md).
  password       text,
  proxy          text NOT NULL,
  register       boolean NOT NULL DEFAULT false,
  ttl            integer NOT NULL DEFAULT 3600,
  date_created   timestamptz NOT NULL DEFAULT now(),
  date_updated   timestamptz NOT NULL DEFAULT now()
);
