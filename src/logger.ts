/** The pino root logger. Credentials are redacted wherever they appear in logged objects. */
import { type Logger, pino } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'password',
  '*.password',
  'authToken',
  '*.authToken',
  'auth_token',
  '*.auth_token',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'Password',
  '*.Password',
];

export function createLogger(level: string, name = 'switchboard'): Logger {
  return pino({ name, level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } });
}
