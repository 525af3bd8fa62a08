/**
 * Email (spec §Endpoints › Email): `POST /Email/Messages` with From, To, Body, Subject (≤ 160
 * characters) required and Type, CC, BCC optional; sent over SMTP (SMTP_URL). Not configured →
 * 503 EmailNotConfigured (21710); the SMTP server refusing → 502 EmailSendFailed (21711).
 */
import type { EmailService } from '../../email/email-service.js';
import { SUBJECT_MAX } from '../../email/email-service.js';
import { AppError } from '../../errors.js';
import { accountOf, formatOf } from '../context.js';
import { one, type RouteSpec } from '../openapi/spec.js';
import { Params } from '../params.js';
import { send } from '../render.js';
import type { RouteTable } from '../router.js';
import { emailDto } from '../serializers/sms.js';
import { API_ROOT } from '../uris.js';

/** Dependencies of the Email route. */
export interface EmailRouteDeps {
  readonly email: EmailService;
}

/** One address `local@domain` (no display names, no lists). */
const ADDRESS = /^[^\s<>,;@]+@[^\s<>,;@]+\.[^\s<>,;@]+$/;

/** A comma-separated list of plain addresses, or a 400 naming the parameter. */
export function addressListParam(p: Params, name: string, required: boolean): string | null {
  const v = required ? p.required(name) : p.get(name);
  if (v === undefined || v === '') return null;
  const parts = v.split(',').map((s) => s.trim());
  if (parts.some((a) => !ADDRESS.test(a))) {
    throw new AppError(
      'InvalidParameter',
      `${name} must be one or more e-mail addresses separated by commas`,
    );
  }
  return parts.join(', ');
}

/** Registers `POST /Email/Messages`. */
export function emailRoutes(routes: RouteTable, deps: EmailRouteDeps): void {
  routes.resource(`${API_ROOT}/Accounts/:accountSid/Email/Messages`, {
    POST: async (_req, res) => {
      const account = accountOf(res);
      const p = Params.body(res);
      const from = addressListParam(p, 'From', true) as string;
      const to = addressListParam(p, 'To', true) as string;
      const body = p.required('Body');
      const subject = p.required('Subject');
      if (subject.length > SUBJECT_MAX) {
        throw new AppError(
          'InvalidParameter',
          `Subject has ${subject.length} characters; at most ${SUBJECT_MAX} are allowed`,
        );
      }
      const type = p.get('Type');
      if (type !== undefined && !/^[\w.+-]+\/[\w.+-]+(\s*;.*)?$/.test(type)) {
        throw new AppError('InvalidParameter', 'Type must be a media type such as text/plain or text/html');
      }
      const cc = addressListParam(p, 'CC', false);
      const bcc = addressListParam(p, 'BCC', false);
      const sent = await deps.email.send({
        from,
        to,
        cc,
        bcc,
        subject,
        body,
        type: type ?? null,
        accountSid: account.sid,
      });
      send(
        res,
        formatOf(res),
        'EmailMessage',
        emailDto({ dateSent: sent.dateSent, accountSid: account.sid, from, to, body, subject }),
      );
    },
  });

  routes.describe(`${API_ROOT}/Accounts/:accountSid/Email/Messages`, EMAIL_SPEC);
}

const EMAIL_SPEC: RouteSpec = {
  tag: 'Email',
  POST: {
    summary: 'Send an email',
    params: [
      { name: 'From', required: true },
      { name: 'To', required: true, description: 'One address or a comma-separated list' },
      { name: 'Body', required: true },
      { name: 'Subject', required: true },
      { name: 'Type', description: 'Media type of the body (text/plain, text/html)' },
      { name: 'CC' },
      { name: 'BCC' },
    ],
    response: one('EmailMessage'),
  },
};
