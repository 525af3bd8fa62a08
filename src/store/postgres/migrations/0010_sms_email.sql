-- SMS messages (spec §SMS message, §SMS status) and the provider message ids of their segments:
-- a delivery receipt names the SMSC's id of one segment, never our sid, so receipts are matched
-- through them. Email is not stored (spec §Email message is a response representation only).
CREATE TABLE sms_messages (
  sid                     text PRIMARY KEY,
  account_sid             text NOT NULL REFERENCES accounts (sid),
  from_address            text NOT NULL,
  to_address              text NOT NULL,
  body                    text NOT NULL,
  status                  text NOT NULL CHECK (status IN
                            ('queued', 'sending', 'sent', 'failed', 'received', 'delivered', 'undelivered')),
  direction               text NOT NULL CHECK (direction IN ('incoming', 'outbound-api', 'outbound-call')),
  channel                 text NOT NULL CHECK (channel IN ('smpp', 'sip')),
  price                   numeric(10, 5),
  price_unit              text NOT NULL DEFAULT 'USD',
  api_version             text NOT NULL DEFAULT '2012-04-24',
  error_code              integer,
  error_message           text,
  status_callback         text,
  destination_network_id  text,
  segments                integer NOT NULL DEFAULT 0,
  possible_duplicate      boolean NOT NULL DEFAULT false,
  -- Resume lease: the node that owns sending this message until the lease ends (restart resume).
  claimed_by              text,
  claimed_until           timestamptz,
  date_sent               timestamptz,
  date_created            timestamptz NOT NULL DEFAULT now(),
  date_updated            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_messages_account_idx ON sms_messages (account_sid, date_created);
-- Pending outbound messages, scanned at start-up to resume them.
CREATE INDEX sms_messages_pending_idx ON sms_messages (date_created) WHERE status IN ('queued', 'sending');

CREATE TABLE sms_provider_ids (
  provider_id  text PRIMARY KEY,
  sms_sid      text NOT NULL REFERENCES sms_messages (sid) ON DELETE CASCADE,
  segment      integer NOT NULL,
  -- Final receipt outcome of this segment (multi-part messages: kept so a restart loses none).
  outcome      text CHECK (outcome IN ('delivered', 'undelivered', 'failed'))
);
CREATE INDEX sms_provider_ids_sms_idx ON sms_provider_ids (sms_sid);
