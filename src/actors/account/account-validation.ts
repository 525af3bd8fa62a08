/**
 * Parameters of account creation and update (spec §Endpoints › Accounts): each check throws the
 * AppError that names the parameter (400), so routes and the service share one wording.
 */
import { AppError } from '../../errors.js';
import { AccountStatus, Role } from '../../store/account-store.js';

export const FRIENDLY_NAME_MAX = 64;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
/** RFC 5321 caps a forward path at 256 octets including the angle brackets. */
const EMAIL_MAX = 254;
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

/** The email address as stored (trimmed, lower-case), or a 400 when it is missing or malformed. */
export function parseEmailAddress(value: string | undefined): string {
  const email = value?.trim().toLowerCase();
  if (!email) throw new AppError('MissingParameter', 'EmailAddress is required');
  if (!EMAIL_RE.test(email) || email.length > EMAIL_MAX) {
    throw new AppError('InvalidParameter', `EmailAddress "${email}" is not a valid email address`);
  }
  return email;
}

export function validateFriendlyName(name: string): void {
  if (name.length === 0 || name.length > FRIENDLY_NAME_MAX) {
    throw new AppError('InvalidParameter', `FriendlyName must be 1 to ${FRIENDLY_NAME_MAX} characters`);
  }
}

export function validatePassword(password: string): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) {
    throw new AppError('InvalidParameter', `Password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
}

export function parseRole(value: string): Role {
  const role = Object.values(Role).find((r) => r === value);
  if (!role) throw new AppError('InvalidParameter', `Role must be one of ${Object.values(Role).join(', ')}`);
  return role;
}

/** A Status the API may set: `uninitialized` is only where a bootstrap without password starts. */
export function parseSettableStatus(value: string): AccountStatus {
  const allowed: AccountStatus[] = [AccountStatus.Active, AccountStatus.Suspended, AccountStatus.Closed];
  const status = allowed.find((s) => s === value);
  if (!status) throw new AppError('InvalidParameter', `Status must be one of ${allowed.join(', ')}`);
  return status;
}
