/**
 * One JSON Schema (draft 2020-12) per resource representation, declared with the DTO's PascalCase
 * member names and rendered with the same snake_case rule as the JSON renderer (render.ts), so the
 * names cannot differ from what the server sends. Every member is required and no other member is
 * allowed: the contract test validates real responses against these, so a member a serializer adds
 * or drops fails it until the declaration follows.
 */
import { SidPrefix } from '../../ids.js';
import { ACCOUNT_STATUSES, ROLES } from '../../store/account-store.js';
import { APPLICATION_KINDS } from '../../store/application-store.js';
import { CALL_STATUSES, CallDirection } from '../../store/call-store.js';
import { SmsDirection, SmsStatus } from '../../store/sms-store.js';
import { snakeCase } from '../render.js';
import { ACCOUNT_SUBRESOURCES } from '../serializers/account.js';

export type JsonSchema = { readonly [key: string]: unknown };

interface Member {
  readonly schema: JsonSchema;
  /** Present only in some representations (a call's conference members after Mute). */
  readonly optional?: boolean;
}

const member = (schema: JsonSchema): Member => ({ schema });
const nullable = (m: Member): Member => {
  const type = m.schema.type;
  const schema = { ...m.schema, type: [type, 'null'] };
  if (Array.isArray(m.schema.enum)) return { schema: { ...schema, enum: [...m.schema.enum, null] } };
  return { schema };
};
const optional = (m: Member): Member => ({ ...m, optional: true });

const str = member({ type: 'string' });
const int = member({ type: 'integer' });
const bool = member({ type: 'boolean' });
const sid = (prefix: string) => member({ type: 'string', pattern: `^${prefix}[0-9a-f]{32}$` });
const oneOf = (values: readonly (string | number)[]) =>
  member({ type: typeof values[0] === 'number' ? 'integer' : 'string', enum: [...values] });
/** RFC 2822 date, as the spec's examples show (`Wed, 26 Nov 2026 00:14:12 +0000`). */
const date = member({ type: 'string', description: 'RFC 2822 date' });
const method = oneOf(['GET', 'POST']);
const url = member({ type: 'string', format: 'uri' });
/** A path under this server (`/2012-04-24/...`); `.json` in JSON representations. */
const path = member({ type: 'string', pattern: '^/' });

function object(members: Readonly<Record<string, Member>>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, m] of Object.entries(members)) {
    const key = snakeCase(name);
    properties[key] = m.schema;
    if (!m.optional) required.push(key);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}
const nested = (members: Readonly<Record<string, Member>>): Member => member(object(members));

const stamps = { DateCreated: date, DateUpdated: date };

const subresources: Record<string, Member> = {};
for (const [name] of ACCOUNT_SUBRESOURCES) subresources[name] = path;

export const SCHEMAS = {
  Account: object({
    Sid: sid(SidPrefix.Account),
    FriendlyName: str,
    EmailAddress: str,
    Type: str,
    Status: oneOf(ACCOUNT_STATUSES),
    Role: oneOf(ROLES),
    ...stamps,
    AuthToken: str,
    ParentSid: nullable(sid(SidPrefix.Account)),
    OrganizationSid: sid(SidPrefix.Organization),
    Uri: path,
    SubresourceUris: nested(subresources),
  }),
  Organization: object({
    Sid: sid(SidPrefix.Organization),
    DomainName: str,
    Status: str,
    ...stamps,
    Uri: path,
  }),
  Application: object({
    Sid: sid(SidPrefix.Application),
    ...stamps,
    FriendlyName: str,
    AccountSid: sid(SidPrefix.Account),
    ApiVersion: str,
    VoiceCallerIdLookup: bool,
    Uri: path,
    RcmlUrl: nullable(url),
    Kind: oneOf(APPLICATION_KINDS),
  }),
  Client: object({
    Sid: sid(SidPrefix.Client),
    ...stamps,
    AccountSid: sid(SidPrefix.Account),
    ApiVersion: str,
    FriendlyName: str,
    Login: str,
    Password: member({ type: 'string', const: '********', description: 'always masked' }),
    Status: oneOf([0, 1]),
    VoiceUrl: nullable(url),
    VoiceMethod: method,
    VoiceFallbackUrl: nullable(url),
    VoiceFallbackMethod: method,
    VoiceApplicationSid: nullable(sid(SidPrefix.Application)),
    Uri: path,
  }),
  IncomingPhoneNumber: object({
    Sid: sid(SidPrefix.PhoneNumber),
    AccountSid: sid(SidPrefix.Account),
    FriendlyName: str,
    PhoneNumber: str,
    ...stamps,
    ApiVersion: str,
    VoiceCallerIdLookup: bool,
    ...Object.fromEntries(
      ['Voice', 'Sms', 'Ussd', 'Refer'].flatMap((k) => [
        [`${k}Url`, nullable(url)],
        [`${k}Method`, method],
        ...(k === 'Refer'
          ? []
          : [
              [`${k}FallbackUrl`, nullable(url)],
              [`${k}FallbackMethod`, method],
            ]),
        ...(k === 'Voice'
          ? [
              ['StatusCallback', nullable(url)],
              ['StatusCallbackMethod', method],
            ]
          : []),
        [`${k}ApplicationSid`, nullable(sid(SidPrefix.Application))],
        [`${k}ApplicationName`, nullable(str)],
      ]),
    ),
    Capabilities: nested({ VoiceCapable: bool, SmsCapable: bool, MmsCapable: bool, FaxCapable: bool }),
    Uri: path,
  }),
  Call: object({
    Sid: sid(SidPrefix.Call),
    ...stamps,
    ParentCallSid: nullable(sid(SidPrefix.Call)),
    AccountSid: sid(SidPrefix.Account),
    To: str,
    From: str,
    PhoneNumberSid: nullable(sid(SidPrefix.PhoneNumber)),
    Status: oneOf(CALL_STATUSES),
    StartTime: nullable(date),
    EndTime: nullable(date),
    Duration: nullable(int),
    Price: nullable(str),
    PriceUnit: str,
    Direction: oneOf(Object.values(CallDirection)),
    AnsweredBy: nullable(str),
    ApiVersion: str,
    ForwardedFrom: nullable(str),
    CallerName: nullable(str),
    SipResponseCode: nullable(int),
    Uri: path,
    // Present after a modification that gave Mute (the call's conference view).
    ConferenceSid: optional(nullable(sid(SidPrefix.Conference))),
    Muted: optional(bool),
    Hold: optional(bool),
    StartConferenceOnEnter: optional(bool),
    EndConferenceOnEnter: optional(bool),
    SubresourceUris: nested({ Notifications: path, Recordings: path }),
  }),
  Recording: object({
    Sid: sid(SidPrefix.Recording),
    AccountSid: sid(SidPrefix.Account),
    CallSid: nullable(sid(SidPrefix.Call)),
    Duration: int,
    ApiVersion: str,
    ...stamps,
    Uri: path,
    FileUri: url,
  }),
  Notification: object({
    Sid: sid(SidPrefix.Notification),
    AccountSid: sid(SidPrefix.Account),
    CallSid: nullable(str),
    ApiVersion: nullable(str),
    Log: oneOf([0, 1]),
    ErrorCode: int,
    MoreInfo: member({ type: 'string', description: 'the error reference, `/docs/errors#<code>`' }),
    MessageText: str,
    MessageDate: date,
    RequestUrl: nullable(str),
    RequestMethod: nullable(str),
    RequestVariables: nullable(str),
    ResponseHeaders: nullable(str),
    ResponseBody: nullable(str),
    ...stamps,
    Uri: path,
  }),
  SmsMessage: object({
    Sid: sid(SidPrefix.Sms),
    ...stamps,
    DateSent: nullable(date),
    AccountSid: sid(SidPrefix.Account),
    From: str,
    To: str,
    Body: nullable(str),
    Status: oneOf(Object.values(SmsStatus)),
    Direction: oneOf(Object.values(SmsDirection)),
    Price: nullable(str),
    PriceUnit: str,
    ApiVersion: str,
    Uri: path,
    ErrorCode: nullable(str),
    ErrorMessage: nullable(str),
  }),
  EmailMessage: object({
    DateSent: date,
    AccountSid: sid(SidPrefix.Account),
    From: str,
    To: str,
    Body: str,
    Subject: str,
  }),
  Gateway: object({
    Sid: sid(SidPrefix.Gateway),
    AccountSid: sid(SidPrefix.Account),
    FriendlyName: str,
    UserName: nullable(str),
    Password: nullable(member({ type: 'string', const: '********', description: 'always masked' })),
    Proxy: str,
    Register: bool,
    TTL: int,
    RegistrationState: nullable(str),
    RegistrationExpires: nullable(date),
    RegistrationStatusCode: nullable(int),
    ...stamps,
    Uri: path,
  }),
  AvailablePhoneNumber: object({
    FriendlyName: str,
    PhoneNumber: str,
    Lata: nullable(str),
    RateCenter: nullable(str),
    Latitude: nullable(str),
    Longitude: nullable(str),
    Region: nullable(str),
    PostalCode: nullable(str),
    IsoCountry: str,
    AddressRequirements: str,
    Beta: bool,
    // Twilio's capability members keep their case in JSON, so they are declared as sent.
    Capabilities: member({
      type: 'object',
      properties: { voice: bool.schema, SMS: bool.schema, MMS: bool.schema, fax: bool.schema },
      required: ['voice', 'SMS', 'MMS', 'fax'],
      additionalProperties: false,
    }),
  }),
  AvailableCountry: object({
    CountryCode: str,
    Country: str,
    Beta: bool,
    Uri: path,
    SubresourceUris: nested({ Local: path, TollFree: path, Mobile: path }),
  }),
  OutgoingCallerId: object({
    Sid: sid(SidPrefix.PhoneNumber),
    AccountSid: sid(SidPrefix.Account),
    FriendlyName: str,
    PhoneNumber: str,
    ...stamps,
    Uri: path,
  }),
  Error: object({
    Code: int,
    Message: str,
    MoreInfo: member({ type: 'string', description: 'the error reference, `/docs/errors#<code>`' }),
    Status: int,
  }),
} as const satisfies Record<string, JsonSchema>;

export type SchemaName = keyof typeof SCHEMAS;

/** The paging envelope (paging.ts pageEnvelope); absent page links are the string "null" here. */
export function pageSchema(itemsKey: string, item: string): JsonSchema {
  const link = { type: 'string', description: 'a path, or the string "null" when there is no such page' };
  const count = { type: 'integer', minimum: 0 };
  const members: Record<string, JsonSchema> = {
    page: count,
    num_pages: count,
    page_size: { type: 'integer', minimum: 1 },
    total: count,
    start: count,
    end: count,
    uri: { type: 'string', pattern: '^/' },
    first_page_uri: { type: 'string', pattern: '^/' },
    previous_page_uri: link,
    next_page_uri: link,
    last_page_uri: { type: 'string', pattern: '^/' },
    [itemsKey]: { type: 'array', items: { $ref: `#/components/schemas/${item}` } },
  };
  return { type: 'object', properties: members, required: Object.keys(members) };
}
