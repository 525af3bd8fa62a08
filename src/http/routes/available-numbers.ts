/**
 * AvailablePhoneNumbers: search the number provider for numbers to buy, by country and kind, then
 * purchase one through IncomingPhoneNumbers. Results leave out numbers any account owns. The
 * built-in pool knows no geography beyond the region label an operator gives a range, so the
 * geographic filters it cannot honour are refused rather than ignored.
 */
import type { Request, Response } from 'express';
import { AppError } from '../../errors.js';
import {
  callingCodeOf,
  isKnownCountry,
  type NumberKind,
  normalizeContains,
} from '../../numbers/available.js';
import type { NumberProvider } from '../../numbers/provider.js';
import type { NumberStore } from '../../store/number-store.js';
import { accountOf, formatOf } from '../context.js';
import { list, type ParamSpec, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { Items, send } from '../render.js';
import type { RouteTable } from '../router.js';
import { availableCountryDto, availableNumberDto, KIND_SEGMENTS } from '../serializers/available-number.js';
import { API_ROOT } from '../uris.js';

export interface AvailableNumberRouteDeps {
  readonly numbers: NumberStore;
  readonly numberProvider: NumberProvider;
}

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;

/** Twilio filters that need geographic data the provider does not have. */
const GEOGRAPHIC = [
  'NearNumber',
  'NearLatLong',
  'Distance',
  'InPostalCode',
  'InRateCenter',
  'InLata',
  'InLocality',
];

function countryParam(req: Request): string {
  const iso = req.params.country as string;
  if (!isKnownCountry(iso)) throw new AppError('NotFound', `No numbers are offered in country ${iso}`);
  return iso;
}

export function availableNumberRoutes(routes: RouteTable, deps: AvailableNumberRouteDeps): void {
  const base = `${API_ROOT}/Accounts/:accountSid/AvailablePhoneNumbers`;

  routes.resource(base, {
    GET: async (_req, res) => {
      const accountSid = accountOf(res).sid;
      const format = formatOf(res);
      const countries = deps.numberProvider.countries();
      send(
        res,
        format,
        'Countries',
        new Items(
          'Country',
          countries.map((iso) => availableCountryDto(accountSid, iso, format)),
        ),
      );
    },
  });

  const search = (kind: NumberKind) => async (req: Request, res: Response) => {
    accountOf(res);
    const country = countryParam(req);
    const q = Params.query(req);
    for (const name of GEOGRAPHIC) {
      if (q.has(name))
        throw new AppError(
          'InvalidParameter',
          `${name} is not supported: the number provider has no geographic data`,
        );
    }
    const areaCode = q.get('AreaCode');
    if (areaCode !== undefined) {
      if (callingCodeOf(country) !== '1')
        throw new AppError('InvalidParameter', 'AreaCode applies only to North American numbers');
      if (!/^[2-9]\d{2}$/.test(areaCode))
        throw new AppError('InvalidParameter', 'AreaCode must be a three-digit US or Canada area code');
    }
    const rawContains = q.get('Contains');
    const contains = rawContains === undefined ? undefined : normalizeContains(rawContains);
    if (contains === null)
      throw new AppError('InvalidParameter', 'Contains takes 1 to 16 digits, letters or * (any one digit)');
    const inRegion = q.get('InRegion');
    if (inRegion !== undefined && (inRegion.length === 0 || inRegion.length > 32))
      throw new AppError('InvalidParameter', 'InRegion must be 1 to 32 characters');
    const limit = q.int('PageSize', 1, MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE;
    // Every number of the pool takes voice and SMS and nothing else.
    for (const name of ['VoiceEnabled', 'SmsEnabled', 'Beta', 'ExcludeAllAddressRequired']) q.bool(name);
    const unavailable = q.bool('MmsEnabled') === true || q.bool('FaxEnabled') === true;
    const found = unavailable
      ? []
      : await deps.numberProvider.search({ country, kind, areaCode, contains, inRegion, limit }, (e164s) =>
          deps.numbers.takenAmong(e164s),
        );
    send(
      res,
      formatOf(res),
      'AvailablePhoneNumbers',
      new Items('AvailablePhoneNumber', found.map(availableNumberDto)),
    );
  };

  for (const [segment, kind] of KIND_SEGMENTS) {
    routes.resource(`${base}/:country/${segment}`, { GET: search(kind) });
    routes.describe(`${base}/:country/${segment}`, searchSpec(segment));
  }
  routes.describe(base, {
    tag: 'AvailablePhoneNumbers',
    GET: { summary: 'Countries the number provider offers numbers in', response: list('AvailableCountry') },
  });
}

const SEARCH_PARAMS: readonly ParamSpec[] = [
  { name: 'AreaCode', description: 'Three-digit US or Canada area code' },
  { name: 'Contains', description: 'Digits, letters (keypad) and * (any one digit), anywhere in the number' },
  { name: 'InRegion', description: "The region label of the provider's range (a US state, say)" },
  { name: 'PageSize', type: 'integer', description: `At most this many numbers (default 50, up to 1000)` },
  { name: 'VoiceEnabled', type: 'boolean' },
  { name: 'SmsEnabled', type: 'boolean' },
  { name: 'MmsEnabled', type: 'boolean' },
  { name: 'FaxEnabled', type: 'boolean' },
];

function searchSpec(segment: string): RouteSpec {
  return {
    tag: 'AvailablePhoneNumbers',
    GET: {
      summary: `Search ${segment} numbers to purchase`,
      params: SEARCH_PARAMS,
      response: list('AvailablePhoneNumber'),
    },
  };
}
