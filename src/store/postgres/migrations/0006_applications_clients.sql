-- Applications and clients (spec §Application, §Client).
CREATE TABLE applications (
  sid                     text PRIMARY KEY,
  account_sid             text NOT NULL REFERENCES accounts (sid),
  friendly_name           text NOT NULL,
  api_version             text NOT NULL DEFAULT '2012-04-24',
  voice_caller_id_lookup  boolean NOT NULL DEFAULT false,
  rcml_url                text,
  kind                    text NOT NULL DEFAULT 'voice' CHECK (kind IN ('voice', 'sms', 'ussd')),
  date_created            timestamptz NOT NULL DEFAULT now(),
  date_updated            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX applications_account_idx ON applications (account_sid, date_created);

CREATE TABLE clients (
  sid                    text PRIMARY KEY,
  account_sid            text NOT NULL REFERENCES accounts (sid),
  organization_sid       text NOT NULL REFERENCES organizations (sid),
  login                  text NOT NULL,
  friendly_name          text NOT NULL,
  api_version            text NOT NULL DEFAULT '2012-04-24',
  status                 smallint NOT NULL DEFAULT 1 CHECK (status IN (0, 1)),
  -- SIP digest: HA1 = MD5(login:realm:password) for the organization's domain (the realm).
  ha1                    text NOT NULL,
  realm                  text NOT NULL,
  voice_url              text,
  voice_method           text NOT NULL DEFAULT 'POST',
  voice_fallback_url     text,
  voice_fallback_method  text NOT NULL DEFAULT 'POST',
  voice_application_sid  text REFERENCES applications (sid) ON DELETE SET NULL,
  date_created           timestamptz NOT NULL DEFAULT now(),
  date_updated           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_sid, login)
);
CREATE INDEX clients_account_idx ON clients (account_sid, date_created);
