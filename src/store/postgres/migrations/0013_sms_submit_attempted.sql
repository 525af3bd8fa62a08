-- Set (and committed) just before an outbound message's first submit_sm is written to an SMSC. A
-- message resumed after a crash is flagged possible_duplicate only when this is set: one still
-- waiting in the dead node's queue never reached the carrier and is sent once, unflagged.
ALTER TABLE sms_messages ADD COLUMN submit_attempted boolean NOT NULL DEFAULT false;
