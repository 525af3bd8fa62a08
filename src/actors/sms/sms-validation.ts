/**
 * Validation of an outbound message before it is recorded (spec §SMS, docs/sms.md "REST"): the
 * account is active, the Body is present and within the limit, From is a form a sender may take and
 * an SMS-capable number of the account, To is a number or short code (sent over SMPP) or a client of
 * the account (sent as a SIP MESSAGE). Each refusal is an `AppError` from the catalogue, in the order
 * the checks are listed here: the first fix a client has to make is the one it is told about.
 */
import { AppError } from '../../errors.js';
import { AddressError, AddressKind, isE164, parseAddress } from '../../numbers/address.js';
import { type Account, AccountStatus } from '../../store/account-store.js';
import type { ClientStore } from '../../store/client-store.js';
import type { IncomingNumber, NumberStore } from '../../store/number-store.js';
import type { MultiProviderConfig } from '../../store/profile-store.js';
import type { SmsChannel, SmsDirection } from '../../store/sms-store.js';

/** Spec §SMS: Body limit (Twilio's 1,600 characters = 10 concatenated segments). */
export const BODY_MAX = 1600;
/** Prefix of a recipient that is a client of the account (`client:<login>`). */
export const CLIENT_PREFIX = 'client:';
const SMS_TO_FORMS = [AddressKind.E164, AddressKind.ShortCode, AddressKind.Client] as const;
const SMS_FROM_FORMS = [AddressKind.E164, AddressKind.ShortCode] as const;
/** Cached sender numbers at most; the cache is emptied when full (entries live only a moment anyway). */
const NUMBER_CACHE_MAX = 10_000;

export interface SmsValidationDeps {
  readonly numbers: Pick<NumberStore, 'findByNumber'>;
  readonly clients: Pick<ClientStore, 'list'>;
  /** The account's effective multi-provider configuration (extension, else profile). */
  readonly multiProvider: { effectiveMultiProvider(accountSid: string): Promise<MultiProviderConfig | null> };
  /** False when no SMSC is configured: messages to numbers are refused (21612). */
  readonly hasLink: boolean;
  /** How long a sender number's owner and capability are trusted (NUMBER_CACHE_MS). */
  readonly numberCacheMs: number;
  /** How long an account's multi-provider configuration is trusted (EXTENSION_CACHE_MS). */
  readonly extensionCacheMs: number;
}

/** An outbound message as the API or the markup hands it over. */
export interface SendSmsInput {
  readonly account: Account;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  readonly statusCallback: string | null;
  readonly direction?: SmsDirection;
}

/** What to record for a message that passed validation. */
export interface ValidSms {
  /** `sip` for a `client:` recipient, else `smpp`. */
  readonly channel: SmsChannel;
  /** From as stored: the number's canonical form (as given when trusted). */
  readonly from: string;
  /** Multi-provider `outbound-sms` network id (TLV 0x060E), SMPP only. */
  readonly destinationNetworkId: string | null;
}

/** Refuses a malformed address with the parser's message under the catalogue entry `error`. */
export function checkAddress(
  value: string,
  field: string,
  accept: readonly AddressKind[],
  error: 'InvalidParameter' | 'SmsInvalidTo',
): void {
  try {
    parseAddress(value, { field, accept });
  } catch (e) {
    if (e instanceof AddressError) throw new AppError(error, e.message);
    throw e;
  }
}

/** Validates outbound messages; sender numbers and multi-provider settings are cached briefly. */
export class SmsValidator {
  readonly #deps: SmsValidationDeps;
  readonly #numberCache = new Map<string, { at: number; number: IncomingNumber | null }>();
  readonly #extensionCache = new Map<string, { at: number; id: string | null }>();

  constructor(deps: SmsValidationDeps) {
    this.#deps = deps;
  }

  /**
   * Checks a message and chooses its channel. `trustedFrom`: From was set by the service itself (a
   * client relaying a SIP MESSAGE), so it is neither parsed nor looked up.
   * @throws AppError AccountNotActive, SmsBodyRequired, SmsBodyTooLong, InvalidParameter (From),
   *   SmsInvalidTo, SmsNotConfigured, SmsFromNotOwned
   */
  async validate(
    input: Pick<SendSmsInput, 'account' | 'from' | 'to' | 'body'>,
    trustedFrom: boolean,
  ): Promise<ValidSms> {
    const { account } = input;
    if (account.status !== AccountStatus.Active) {
      throw new AppError('AccountNotActive', `Account ${account.sid} is ${account.status}`);
    }
    if (input.body === '') throw new AppError('SmsBodyRequired', 'Body is required and may not be empty');
    if (input.body.length > BODY_MAX) {
      throw new AppError('SmsBodyTooLong', `Body has ${input.body.length} characters; at most ${BODY_MAX}`);
    }
    // The form of From is checked before To can answer "no SMSC": a malformed value is the first fix.
    if (!trustedFrom) checkAddress(input.from, 'From', SMS_FROM_FORMS, 'InvalidParameter');
    const channel = await this.#checkTo(account, input.to);
    const from = trustedFrom ? input.from : await this.#checkFrom(account, input.from);
    const destinationNetworkId = channel === 'smpp' ? await this.#destinationNetworkId(account.sid) : null;
    return { channel, from, destinationNetworkId };
  }

  async #checkTo(account: Account, to: string): Promise<SmsChannel> {
    if (to.startsWith(CLIENT_PREFIX)) {
      const login = to.slice(CLIENT_PREFIX.length);
      const clients = await this.#deps.clients.list(account.sid);
      if (!login || !clients.some((c) => c.login === login)) {
        throw new AppError('SmsInvalidTo', `To ${to} is not a client of this account`);
      }
      return 'sip';
    }
    checkAddress(to, 'To', SMS_TO_FORMS, 'SmsInvalidTo');
    if (!this.#deps.hasLink) {
      throw new AppError('SmsNotConfigured', 'No SMSC is configured on this service (SMPP_URL)');
    }
    return 'smpp';
  }

  async #checkFrom(account: Account, from: string): Promise<string> {
    const number = isE164(from) ? await this.#numberOf(from) : null;
    if (!number || number.accountSid !== account.sid || !number.smsCapable) {
      throw new AppError(
        'SmsFromNotOwned',
        `From ${from} is not an SMS-capable incoming phone number or short code of account ${account.sid}`,
      );
    }
    return number.phoneNumber;
  }

  /** Sender numbers are looked up on every send: cached briefly (a release shows within NUMBER_CACHE_MS). */
  async #numberOf(e164: string): Promise<IncomingNumber | null> {
    const hit = this.#numberCache.get(e164);
    if (hit && Date.now() - hit.at < this.#deps.numberCacheMs) return hit.number;
    const number = await this.#deps.numbers.findByNumber(e164);
    if (this.#numberCache.size >= NUMBER_CACHE_MAX) this.#numberCache.clear();
    this.#numberCache.set(e164, { at: Date.now(), number });
    return number;
  }

  async #destinationNetworkId(accountSid: string): Promise<string | null> {
    const hit = this.#extensionCache.get(accountSid);
    if (hit && Date.now() - hit.at < this.#deps.extensionCacheMs) return hit.id;
    const cfg = await this.#deps.multiProvider.effectiveMultiProvider(accountSid);
    const raw = cfg?.['outbound-sms']?.[0]?.destination_network_id;
    const id = raw === undefined ? null : String(raw);
    this.#extensionCache.set(accountSid, { at: Date.now(), id });
    return id;
  }
}
