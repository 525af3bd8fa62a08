/** Form parameters that hold an address (From, To, PhoneNumber), read with the one address parser. */
import { AppError } from '../errors.js';
import { type Address, AddressError, type AddressKind, parseAddress } from '../numbers/address.js';

/**
 * Parses `value` as one of `accept`; a malformed value is 21100 InvalidParameter with the parser's
 * message (which names the field and, for a `+` sent unencoded, says to send %2B).
 */
export function addressParam(field: string, value: string, accept: readonly AddressKind[]): Address {
  try {
    return parseAddress(value, { field, accept });
  } catch (e) {
    if (e instanceof AddressError) throw new AppError('InvalidParameter', e.message);
    throw e;
  }
}
