-- Live calls are owned by the node that runs them: it renews `claimed_until` while the call lives.
-- A live call (queued, ringing, in-progress) whose claim expired belongs to a node that died; another
-- node (or the same one restarted) claims it, ends its dialog and closes the record (docs/calls.md).
ALTER TABLE calls ADD COLUMN claimed_by text, ADD COLUMN claimed_until timestamptz;
CREATE INDEX calls_live_claims_idx ON calls (claimed_until) WHERE status IN ('queued', 'ringing', 'in-progress');
