/**
 * AvailablePhoneNumbers DTOs (Twilio's and Restcomm's members): the numbers a search offers, and the
 * countries the provider serves. Geographic members the built-in pool does not know are null.
 */

import { formatNumber } from '../../numbers/address.js';
import type { AvailableNumber, NumberKind } from '../../numbers/available.js';
import { type Dto, type Format, Named } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

/** Path segment of each kind (`/AvailablePhoneNumbers/US/TollFree`). */
export const KIND_SEGMENTS: ReadonlyArray<readonly [string, NumberKind]> = [
  ['Local', 'local'],
  ['TollFree', 'tollfree'],
  ['Mobile', 'mobile'],
];

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

export function availableNumberDto(n: AvailableNumber): Dto {
  return {
    FriendlyName: formatNumber(n.phoneNumber),
    PhoneNumber: n.phoneNumber,
    Lata: null,
    RateCenter: null,
    Latitude: null,
    Longitude: null,
    Region: n.region,
    PostalCode: null,
    IsoCountry: n.isoCountry,
    AddressRequirements: 'none',
    Beta: false,
    // Twilio's capability names keep their case in JSON (`SMS`, not `sms`).
    Capabilities: {
      Voice: new Named('voice', true),
      SMS: new Named('SMS', true),
      MMS: new Named('MMS', false),
      Fax: new Named('fax', false),
    },
  };
}

export function availableCountryDto(accountSid: string, iso: string, format: Format): Dto {
  const base = `${accountPath(accountSid)}/AvailablePhoneNumbers/${iso}`;
  const subresources: Record<string, string> = {};
  for (const [segment] of KIND_SEGMENTS) subresources[segment] = uriOf(format, `${base}/${segment}`);
  return {
    CountryCode: iso,
    Country: regionNames.of(iso) ?? iso,
    Beta: false,
    Uri: uriOf(format, base),
    SubresourceUris: subresources,
  };
}
