-- Conferences (spec §Conferences): one row per conference, from the first participant's arrival to
-- its end. Written by the conference actor's record writer; participants are live only (read from
-- the actor), as in Twilio's API.
CREATE TABLE conferences (
  sid                         text PRIMARY KEY,
  account_sid                 text NOT NULL REFERENCES accounts (sid),
  friendly_name               text NOT NULL,
  status                      text NOT NULL,
  api_version                 text NOT NULL,
  reason_conference_ended     text,
  call_sid_ending_conference  text,
  date_created                timestamptz NOT NULL,
  date_updated                timestamptz NOT NULL
);
CREATE INDEX conferences_account_created ON conferences (account_sid, date_created DESC, sid DESC);
CREATE INDEX conferences_account_name ON conferences (account_sid, friendly_name);
