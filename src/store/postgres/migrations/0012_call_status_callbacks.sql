-- A REST call's StatusCallback, kept with the record so that the node ending a dead node's call
-- (recovery, docs/calls.md) can still send its `completed` callback. Not part of the REST resource.
ALTER TABLE calls ADD COLUMN status_callback text, ADD COLUMN status_callback_method text,
  ADD COLUMN status_callback_events text[];
