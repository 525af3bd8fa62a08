-- Caller ids an account may present as From besides its own incoming numbers (Twilio/Restcomm
-- OutgoingCallerIds). One row per account and number.
CREATE TABLE outgoing_caller_ids (
  sid            text PRIMARY KEY,
  account_sid    text NOT NULL REFERENCES accounts (sid),
  friendly_name  text NOT NULL,
  phone_number   text NOT NULL,
  date_created   timestamptz NOT NULL,
  date_updated   timestamptz NOT NULL,
  UNIQUE (account_sid, phone_number)
);
