/**
 * Incoming phone numbers (spec §Endpoints › Incoming phone numbers): purchase through the
 * number-provider port, the Local/TollFree/Mobile factories, filters, update (incl. transfer to another
 * account the caller controls) and release. Channels (Voice, Sms, Ussd, Refer) share one parameter
 * pattern: Url, Method, FallbackUrl, FallbackMethod, ApplicationSid — the application wins.
 */
import type { Request, Response } from 'express';
import type { AccountService } from '../../actors/account/account-service.js';
import { AppError } from '../../errors.js';
import { newSid, SidPrefix } from '../../ids.js';
import { AddressKind, formatNumber, isShortCode, isUssdCode, numberTypeOf } from '../../numbers/address.js';
import type { NumberProvider } from '../../numbers/provider.js';
import type { ApplicationStore } from '../../store/application-store.js';
import type { IncomingNumber, NumberPatch, NumberStore, NumberType } from '../../store/number-store.js';
import { addressParam } from '../address-param.js';
import { accountOf, callerOf, formatOf } from '../context.js';
import { empty, list, one, type ParamSpec, type RouteSpec, voiceTarget } from '../openapi/spec.js';
import { Params } from '../params.js';
import { Items, send } from '../render.js';
import type { RouteTable } from '../router.js';
import { incomingNumberDto } from '../serializers/incoming-number.js';
import { API_ROOT } from '../uris.js';
import { apiVersionParam, friendlyNameParam, methodParam, urlParam } from '../validate.js';

export interface IncomingNumberRouteDeps {
  readonly numbers: NumberStore;
  readonly numberProvider: NumberProvider;
  readonly applications: ApplicationStore;
  readonly accounts: AccountService;
  readonly publicUrl: string;
}

/** A PhoneNumber: an E.164 number, or a USSD code (`*777#`) or short code (`5544`) for USSD. */
const PHONE_NUMBER_FORMS = [AddressKind.E164, AddressKind.UssdCode, AddressKind.ShortCode] as const;
const isServiceCode = (value: string) => isUssdCode(value) || isShortCode(value);

const FACTORIES: ReadonlyArray<[string, NumberType]> = [
  ['Local', 'local'],
  ['TollFree', 'tollfree'],
  ['Mobile', 'mobile'],
];

export function incomingNumberRoutes(routes: RouteTable, deps: IncomingNumberRouteDeps): void {
  const base = `${API_ROOT}/Accounts/:accountSid/IncomingPhoneNumbers`;

  const appNames = async (accountSid: string) =>
    new Map((await deps.applications.list(accountSid)).map((a) => [a.sid, a.friendlyName]));

  const render = async (res: Response, n: IncomingNumber, status = 200) => {
    send(
      res,
      formatOf(res),
      'IncomingPhoneNumber',
      incomingNumberDto(n, formatOf(res), await appNames(n.accountSid)),
      status,
    );
  };

  /** Every optional setting of a purchase or an update; application sids must be the account's own. */
  const settings = async (p: Params, accountSid: string): Promise<NumberPatch> => {
    const app = async (name: string) => {
      const v = p.get(name);
      if (v === undefined) return undefined;
      if (v === '') return null;
      if (!(await deps.applications.get(accountSid, v))) {
        throw new AppError('InvalidParameter', `${name} ${v} is not an application of this account`);
      }
      return v;
    };
    return {
      friendlyName: friendlyNameParam(p, 'FriendlyName'),
      apiVersion: apiVersionParam(p),
      voiceCallerIdLookup: p.bool('VoiceCallerIdLookup'),
      voiceUrl: urlParam(p, 'VoiceUrl'),
      voiceMethod: methodParam(p, 'VoiceMethod'),
      voiceFallbackUrl: urlParam(p, 'VoiceFallbackUrl'),
      voiceFallbackMethod: methodParam(p, 'VoiceFallbackMethod'),
      statusCallback: urlParam(p, 'StatusCallback'),
      statusCallbackMethod: methodParam(p, 'StatusCallbackMethod'),
      voiceApplicationSid: await app('VoiceApplicationSid'),
      smsUrl: urlParam(p, 'SmsUrl'),
      smsMethod: methodParam(p, 'SmsMethod'),
      smsFallbackUrl: urlParam(p, 'SmsFallbackUrl'),
      smsFallbackMethod: methodParam(p, 'SmsFallbackMethod'),
      smsApplicationSid: await app('SmsApplicationSid'),
      ussdUrl: urlParam(p, 'UssdUrl'),
      ussdMethod: methodParam(p, 'UssdMethod'),
      ussdFallbackUrl: urlParam(p, 'UssdFallbackUrl'),
      ussdFallbackMethod: methodParam(p, 'UssdFallbackMethod'),
      ussdApplicationSid: await app('UssdApplicationSid'),
      referUrl: urlParam(p, 'ReferUrl'),
      referMethod: methodParam(p, 'ReferMethod'),
      referApplicationSid: await app('ReferApplicationSid'),
    };
  };

  const list = (type?: NumberType) => async (req: Request, res: Response) => {
    const q = Params.query(req);
    q.bool('Beta'); // validated; the local pool has no beta numbers
    const accountSid = accountOf(res).sid;
    const items = await deps.numbers.list({
      accountSid,
      phoneNumber: q.get('PhoneNumber'),
      friendlyName: q.get('FriendlyName'),
      numberType: type,
    });
    const names = await appNames(accountSid);
    const format = formatOf(res);
    send(
      res,
      format,
      'IncomingPhoneNumbers',
      new Items(
        'IncomingPhoneNumber',
        items.map((n) => incomingNumberDto(n, format, names)),
      ),
    );
  };

  const purchase = (type?: NumberType) => async (_req: Request, res: Response) => {
    const accountSid = accountOf(res).sid;
    const p = Params.body(res);
    const phoneNumber = p.get('PhoneNumber');
    const areaCode = p.get('AreaCode');
    if (type !== undefined && areaCode !== undefined) {
      throw new AppError('InvalidParameter', 'AreaCode is not supported on this resource; send PhoneNumber');
    }
    if (areaCode !== undefined) {
      if (!/^[2-9]\d{2}$/.test(areaCode)) {
        throw new AppError('InvalidParameter', 'AreaCode must be a three-digit US or Canada area code');
      }
    } else if (phoneNumber === undefined || phoneNumber === '') {
      throw new AppError('MissingParameter', 'PhoneNumber or AreaCode is required');
    } else {
      addressParam('PhoneNumber', phoneNumber, PHONE_NUMBER_FORMS);
    }
    const set = await settings(p, accountSid);
    const request = areaCode !== undefined ? { areaCode } : { phoneNumber };
    for (let attempt = 0; attempt < 3; attempt++) {
      // USSD and short codes are the operator's own service codes: hosted as written, not bought.
      const number =
        phoneNumber !== undefined && isServiceCode(phoneNumber)
          ? (await deps.numbers.isTaken(phoneNumber))
            ? null
            : phoneNumber
          : await deps.numberProvider.find(request, (n) => deps.numbers.isTaken(n));
      if (!number) break;
      const at = new Date();
      const n: IncomingNumber = {
        sid: newSid(SidPrefix.PhoneNumber),
        accountSid,
        phoneNumber: number,
        numberType: type ?? numberTypeOf(number),
        friendlyName: set.friendlyName ?? formatNumber(number),
        apiVersion: set.apiVersion ?? '2012-04-24',
        voiceCallerIdLookup: set.voiceCallerIdLookup ?? false,
        voiceUrl: set.voiceUrl ?? null,
        voiceMethod: set.voiceMethod ?? 'POST',
        voiceFallbackUrl: set.voiceFallbackUrl ?? null,
        voiceFallbackMethod: set.voiceFallbackMethod ?? 'POST',
        statusCallback: set.statusCallback ?? null,
        statusCallbackMethod: set.statusCallbackMethod ?? 'POST',
        voiceApplicationSid: set.voiceApplicationSid ?? null,
        smsUrl: set.smsUrl ?? null,
        smsMethod: set.smsMethod ?? 'POST',
        smsFallbackUrl: set.smsFallbackUrl ?? null,
        smsFallbackMethod: set.smsFallbackMethod ?? 'POST',
        smsApplicationSid: set.smsApplicationSid ?? null,
        ussdUrl: set.ussdUrl ?? null,
        ussdMethod: set.ussdMethod ?? 'POST',
        ussdFallbackUrl: set.ussdFallbackUrl ?? null,
        ussdFallbackMethod: set.ussdFallbackMethod ?? 'POST',
        ussdApplicationSid: set.ussdApplicationSid ?? null,
        referUrl: set.referUrl ?? null,
        referMethod: set.referMethod ?? 'POST',
        referApplicationSid: set.referApplicationSid ?? null,
        voiceCapable: true,
        smsCapable: true,
        mmsCapable: false,
        faxCapable: false,
        dateCreated: at,
        dateUpdated: at,
      };
      // The unique constraint decides races between two purchases of the same number.
      if (await deps.numbers.insert(n)) {
        res.setHeader(
          'Location',
          `${deps.publicUrl}${API_ROOT}/Accounts/${accountSid}/IncomingPhoneNumbers/${n.sid}`,
        );
        await render(res, n, 201);
        return;
      }
      if (areaCode === undefined) break;
    }
    // Only the buyer's own number is named as owned: another tenant's stays "no match" so a purchase
    // attempt cannot probe which numbers other accounts hold.
    const owner = phoneNumber === undefined ? null : await deps.numbers.findByNumber(phoneNumber);
    if (areaCode === undefined && owner?.accountSid === accountSid) {
      throw new AppError(
        'NumberAlreadyOwned',
        `${phoneNumber} is already an incoming phone number of this account`,
      );
    }
    throw new AppError(
      'NoNumberAvailable',
      `No phone number matches ${areaCode !== undefined ? `area code ${areaCode}` : phoneNumber}`,
    );
  };

  routes.resource(base, { GET: list(), POST: purchase() });
  for (const [segment, type] of FACTORIES) {
    routes.resource(`${base}/${segment}`, { GET: list(type), POST: purchase(type) });
  }

  const find = async (res: Response, sid: string) => {
    const n = await deps.numbers.get(accountOf(res).sid, sid);
    if (!n) throw new AppError('NotFound', `IncomingPhoneNumber ${sid} not found`);
    return n;
  };

  const update = async (req: Request, res: Response) => {
    const account = accountOf(res);
    const current = await find(res, req.params.numberSid as string);
    const p = Params.body(res);
    const patch: NumberPatch = { ...(await settings(p, account.sid)) };
    const transferTo = p.get('AccountSid');
    if (transferTo !== undefined && transferTo !== account.sid) {
      const target = await deps.accounts.resolve(transferTo);
      if (!target || !(await deps.accounts.inScope(callerOf(res), target)) || target.status !== 'active') {
        throw new AppError(
          'InvalidParameter',
          `AccountSid ${transferTo} is not an active account you control`,
        );
      }
      // Applications belong to the old account: the transferred number keeps none.
      Object.assign(patch, {
        accountSid: target.sid,
        voiceApplicationSid: null,
        smsApplicationSid: null,
        ussdApplicationSid: null,
        referApplicationSid: null,
      });
    }
    const updated = await deps.numbers.update(account.sid, current.sid, patch);
    if (!updated) throw new AppError('NotFound', `IncomingPhoneNumber ${current.sid} not found`);
    await render(res, updated);
  };

  routes.resource(`${base}/:numberSid`, {
    GET: async (req, res) => render(res, await find(res, req.params.numberSid as string)),
    POST: update,
    PUT: update,
    DELETE: async (req, res) => {
      if (!(await deps.numbers.delete(accountOf(res).sid, req.params.numberSid as string))) {
        throw new AppError('NotFound', `IncomingPhoneNumber ${req.params.numberSid} not found`);
      }
      res.status(204).end();
    },
  });

  routes.describe(base, numbersSpec());
  for (const [segment] of FACTORIES) routes.describe(`${base}/${segment}`, numbersSpec(segment));
  routes.describe(`${base}/:numberSid`, NUMBER_SPEC);
}

const NUMBER_SETTINGS: ParamSpec[] = [
  { name: 'FriendlyName' },
  { name: 'ApiVersion' },
  { name: 'VoiceCallerIdLookup', type: 'boolean' },
  ...voiceTarget('Voice'),
  { name: 'StatusCallback', type: 'url' },
  { name: 'StatusCallbackMethod', type: 'method' },
  { name: 'VoiceApplicationSid', type: 'sid' },
  ...voiceTarget('Sms'),
  { name: 'SmsApplicationSid', type: 'sid' },
  ...voiceTarget('Ussd'),
  { name: 'UssdApplicationSid', type: 'sid' },
  { name: 'ReferUrl', type: 'url' },
  { name: 'ReferMethod', type: 'method' },
  { name: 'ReferApplicationSid', type: 'sid' },
];

/** The list and purchase of all numbers, or of one type (`Local`, `TollFree`, `Mobile`). */
function numbersSpec(segment?: string): RouteSpec {
  const kind = segment ? `${segment} ` : '';
  return {
    tag: 'IncomingPhoneNumbers',
    GET: {
      summary: `List ${kind}incoming phone numbers`,
      params: [{ name: 'PhoneNumber' }, { name: 'FriendlyName' }, { name: 'Beta', type: 'boolean' }],
      response: list('IncomingPhoneNumber'),
    },
    POST: {
      summary: `Buy a ${kind}phone number`,
      description: segment
        ? 'PhoneNumber is required (E.164).'
        : 'PhoneNumber (E.164) or AreaCode (a three-digit US or Canada area code) is required.',
      params: [
        { name: 'PhoneNumber', required: segment ? 'handler' : false },
        ...(segment ? [] : [{ name: 'AreaCode' }]),
        ...NUMBER_SETTINGS,
      ],
      response: one('IncomingPhoneNumber', 201),
    },
  };
}

const NUMBER_UPDATE: RouteSpec['POST'] = {
  summary: 'Update an incoming phone number',
  description: 'AccountSid transfers the number to another active account the caller controls.',
  params: [...NUMBER_SETTINGS, { name: 'AccountSid', type: 'sid' }],
  response: one('IncomingPhoneNumber'),
};

const NUMBER_SPEC: RouteSpec = {
  tag: 'IncomingPhoneNumbers',
  GET: { summary: 'Get an incoming phone number', response: one('IncomingPhoneNumber') },
  POST: NUMBER_UPDATE,
  PUT: { ...NUMBER_UPDATE, summary: 'Update an incoming phone number (PUT)' },
  DELETE: { summary: 'Release an incoming phone number', response: empty },
};
