/** The two profile schemas (spec §Profile), served at /2012-04-24/Profiles/schemas/<name>.json. */
import { Ajv, type ValidateFunction } from 'ajv';

export const PLATFORM_SCHEMA = 'rc-profile-schema.json';
export const SUBSCRIBER_SCHEMA = 'rc-subscriber-schema.json';

import type { ProfileKind } from '../store/profile-store.js';

const prefixes = { type: 'array', items: { type: 'string' } };

export const SCHEMAS: Record<string, object> = {
  [PLATFORM_SCHEMA]: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Platform profile',
    type: 'object',
    additionalProperties: false,
    properties: {
      featureEnablement: {
        type: 'object',
        properties: {
          DIDPurchase: {
            type: 'object',
            properties: { allowedCountries: { type: 'array', items: { type: 'string' } } },
          },
          subaccountsCreation: { type: 'object' },
          outboundPSTN: {
            type: 'object',
            properties: { allowedPrefixes: prefixes, blockedPrefixes: prefixes },
          },
          inboundPSTN: { type: 'object' },
          outboundSMS: {
            type: 'object',
            properties: { allowedPrefixes: prefixes, blockedPrefixes: prefixes },
          },
          inboundSMS: { type: 'object' },
        },
      },
    },
  },
  [SUBSCRIBER_SCHEMA]: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Subscriber profile',
    type: 'object',
    properties: {
      multiprovider: {
        type: 'object',
        additionalProperties: false,
        properties: {
          'outbound-sms': {
            type: 'array',
            minItems: 1,
            maxItems: 1,
            items: {
              type: 'object',
              required: ['destination_network_id'],
              properties: { destination_network_id: { type: ['string', 'integer'], pattern: '^\\d+$' } },
            },
          },
          'outbound-voice': {
            type: 'array',
            minItems: 1,
            maxItems: 1,
            items: {
              type: 'object',
              required: ['proxy'],
              properties: {
                proxy: {
                  type: 'array',
                  minItems: 1,
                  items: {
                    type: 'object',
                    required: ['uri'],
                    properties: {
                      uri: { type: 'string', minLength: 1 },
                      username: { type: 'string' },
                      password: { type: 'string' },
                      match: { type: 'string' },
                      headers: {
                        type: 'array',
                        items: {
                          type: 'object',
                          required: ['headerName', 'key', 'value'],
                          properties: {
                            headerName: { type: 'string' },
                            key: { type: 'string' },
                            value: { type: 'string' },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

const ajv = new Ajv({ allErrors: false, strict: false });
const validators: Record<ProfileKind, ValidateFunction> = {
  platform: ajv.compile(SCHEMAS[PLATFORM_SCHEMA] as object),
  subscriber: ajv.compile(SCHEMAS[SUBSCRIBER_SCHEMA] as object),
};

/** Null when valid, else the first problem as `<json pointer> <message>`. */
export function validateProfile(kind: ProfileKind, doc: unknown): string | null {
  const v = validators[kind];
  if (v(doc)) return null;
  const e = v.errors?.[0];
  return e ? `${e.instancePath || '/'} ${e.message ?? 'is invalid'}` : 'document is invalid';
}

export function schemaNameOf(kind: ProfileKind): string {
  return kind === 'platform' ? PLATFORM_SCHEMA : SUBSCRIBER_SCHEMA;
}

/** The kind named by a Content-Type `schema` parameter, or null. */
export function kindFromContentType(contentType: string | undefined): ProfileKind | null {
  const m = /;\s*schema="?([^";]+)"?/i.exec(contentType ?? '');
  if (!m) return null;
  const name = (m[1] as string).split('/').pop();
  return name === PLATFORM_SCHEMA ? 'platform' : name === SUBSCRIBER_SCHEMA ? 'subscriber' : null;
}
