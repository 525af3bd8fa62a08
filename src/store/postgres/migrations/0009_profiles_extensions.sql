-- Profiles (spec §Profile) and their links to accounts/organizations; multi-provider extension configuration.
CREATE TABLE profiles (
  sid                text PRIMARY KEY,
  kind               text NOT NULL CHECK (kind IN ('platform', 'subscriber')),
  document           jsonb NOT NULL,
  owner_account_sid  text REFERENCES accounts (sid),
  date_created       timestamptz NOT NULL DEFAULT now(),
  date_updated       timestamptz NOT NULL DEFAULT now()
);
-- One profile per entity; linking another profile replaces the link.
CREATE TABLE profile_links (
  target_sid   text PRIMARY KEY,
  profile_sid  text NOT NULL REFERENCES profiles (sid) ON DELETE CASCADE
);
CREATE INDEX profile_links_profile_idx ON profile_links (profile_sid);
INSERT INTO profiles (sid, kind, document) VALUES ('PRae6e420f425248d6a26948c17a9e2acf', 'platform', '{}');

CREATE TABLE extensions (
  sid                 text PRIMARY KEY,
  account_sid         text NOT NULL REFERENCES accounts (sid),
  extension_name      text NOT NULL,
  enabled             boolean NOT NULL,
  configuration_data  jsonb NOT NULL,
  date_created        timestamptz NOT NULL DEFAULT now(),
  date_updated        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (account_sid, extension_name)
);
