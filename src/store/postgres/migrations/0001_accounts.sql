-- Foundation: organizations and accounts (spec §Account, §Organization, §Account Status).
CREATE TABLE organizations (
  sid          text PRIMARY KEY,
  domain_name  text NOT NULL UNIQUE,
  status       text NOT NULL DEFAULT 'active',
  date_created timestamptz NOT NULL DEFAULT now(),
  date_updated timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE accounts (
  sid              text PRIMARY KEY,
  parent_sid       text REFERENCES accounts (sid),
  organization_sid text NOT NULL REFERENCES organizations (sid),
  email_address    text NOT NULL UNIQUE,
  friendly_name    text NOT NULL,
  type             text NOT NULL DEFAULT 'Full',
  status           text NOT NULL CHECK (status IN ('uninitialized', 'active', 'suspended', 'closed')),
  -- Sid of the account whose suspension cascaded here (this account's own sid when suspended directly).
  suspended_by     text,
  role             text NOT NULL CHECK (role IN ('Administrator', 'Developer', 'ProvisioningAgent')),
  is_super_admin   boolean NOT NULL DEFAULT false,
  auth_token       text NOT NULL,
  password_hash    text NOT NULL,
  date_created     timestamptz NOT NULL DEFAULT now(),
  date_updated     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX accounts_parent_idx ON accounts (parent_sid);
CREATE UNIQUE INDEX accounts_one_super_admin ON accounts ((true)) WHERE is_super_admin;
