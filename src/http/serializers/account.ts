/** Account and Organization DTOs (spec §Account). */
import { rfc2822 } from '../../dates.js';
import type { Account, Organization } from '../../store/account-store.js';
import type { Dto, Format } from '../render.js';
import { API_ROOT, accountPath, uriOf } from '../uris.js';

/**
 * Only the lists this server serves under an account, so that every URI answers (docs/decisions.md:
 * Sandbox and Transcriptions are not implemented and are left out rather than answered with lists
 * that would misstate the state).
 */
export const ACCOUNT_SUBRESOURCES: ReadonlyArray<[string, string]> = [
  ['Applications', 'Applications'],
  ['AvailablePhoneNumbers', 'AvailablePhoneNumbers'],
  ['Calls', 'Calls'],
  ['Clients', 'Clients'],
  ['IncomingPhoneNumbers', 'IncomingPhoneNumbers'],
  ['Notifications', 'Notifications'],
  ['OutgoingCallerIds', 'OutgoingCallerIds'],
  ['Recordings', 'Recordings'],
  ['SMSMessages', 'SMS/Messages'],
];

export function accountDto(a: Account, format: Format): Dto {
  const base = accountPath(a.sid);
  const subresources: Record<string, string> = {};
  for (const [name, path] of ACCOUNT_SUBRESOURCES) subresources[name] = uriOf(format, `${base}/${path}`);
  return {
    Sid: a.sid,
    FriendlyName: a.friendlyName,
    EmailAddress: a.emailAddress,
    Type: a.type,
    Status: a.status,
    Role: a.role,
    DateCreated: rfc2822(a.dateCreated),
    DateUpdated: rfc2822(a.dateUpdated),
    AuthToken: a.authToken,
    ParentSid: a.parentSid,
    OrganizationSid: a.organizationSid,
    Uri: uriOf(format, base),
    SubresourceUris: subresources,
  };
}

export function organizationDto(o: Organization, format: Format): Dto {
  return {
    Sid: o.sid,
    DomainName: o.domainName,
    Status: o.status,
    DateCreated: rfc2822(o.dateCreated),
    DateUpdated: rfc2822(o.dateUpdated),
    Uri: uriOf(format, `${API_ROOT}/Organizations/${o.sid}`),
  };
}
