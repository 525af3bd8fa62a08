/**
 * The demo's "try it" block: how to call the demo number (sipp, baresip) and REST examples. The
 * examples are built here as argument lists and rendered with shell quoting, so what is printed is
 * exactly what runs when pasted (the demo's test runs the printed lines). Anything holding a `+`
 * goes through `--data-urlencode`: with `-d` a `+` would arrive as a space.
 */

import { formatSipAddress, parseHostOrSipUri } from '../../sip/sip-uri.js';

export const TRY_IT_BEGIN = '---- try it ----';
export const TRY_IT_END = '---- end of try it ----';

export interface TryItInput {
  /** Public base URL of the REST API, e.g. http://127.0.0.1:8080 */
  readonly base: string;
  readonly accountSid: string;
  readonly authToken: string;
  readonly number: string;
  /** SIP address callers use, host:port. */
  readonly sip: string;
  readonly client: { readonly login: string; readonly password: string };
  /** A number the SMS example sends to. */
  readonly smsTo: string;
}

/** A REST example: what it shows and the curl arguments (after `curl`). */
export interface RestExample {
  readonly title: string;
  readonly args: readonly string[];
}

/** Single-quotes a word for POSIX shells when it holds anything but safe characters. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

export function restExamples(o: TryItInput): RestExample[] {
  const auth = ['-u', `${o.accountSid}:${o.authToken}`];
  const account = `${o.base}/2012-04-24/Accounts/${o.accountSid}`;
  return [
    { title: 'Your account (JSON)', args: [...auth, `${account}.json`] },
    {
      title: 'Send an SMS from the demo number (the bundled SMSC simulator delivers it)',
      args: [
        ...auth,
        `${account}/SMS/Messages.json`,
        '--data-urlencode',
        `From=${o.number}`,
        '--data-urlencode',
        `To=${o.smsTo}`,
        '--data-urlencode',
        'Body=Hello from Switchboard',
      ],
    },
    { title: 'Messages sent', args: [...auth, `${account}/SMS/Messages.json`] },
    {
      title: 'Calls to the demo number',
      args: [...auth, '-G', `${account}/Calls.json`, '--data-urlencode', `To=${o.number}`],
    },
    { title: 'Messages left on the demo number (Recordings)', args: [...auth, `${account}/Recordings.json`] },
  ];
}

/** Renders one curl example, breaking long ones after each option pair. */
export function renderCurl(args: readonly string[]): string {
  const words = args.map(shellQuote);
  const lines: string[] = [];
  let line = 'curl';
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    const pair = w.startsWith('-') && i + 1 < words.length ? `${w} ${words[++i]}` : w;
    if (line.length + pair.length > 100) {
      lines.push(`${line} \\`);
      line = `     ${pair}`;
    } else line += ` ${pair}`;
  }
  lines.push(line);
  return lines.join('\n');
}

/** The whole block as printed (between TRY_IT_BEGIN and TRY_IT_END). */
export function tryItBlock(o: TryItInput): string {
  const { host, port = 5080 } = parseHostOrSipUri(o.sip);
  // A wildcard listener is reached on loopback; there sipp binds another loopback address than
  // the server's (sharing one address and port range with it clashes).
  const target = host === '0.0.0.0' ? '127.0.0.1' : host;
  const peer = target.startsWith('127.') ? ` -i ${target === '127.0.0.2' ? '127.0.0.3' : '127.0.0.2'}` : '';
  const sip = `${target.includes(':') ? `[${target}]` : target}:${port}`;
  const account = formatSipAddress(o.client.login, target, { port, params: { transport: 'udp' } });
  const indent = (text: string): string =>
    text
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n');
  const rest = restExamples(o)
    .map((e) => `# ${e.title}\n${renderCurl(e.args)}`)
    .join('\n');
  return [
    TRY_IT_BEGIN,
    `Call the demo number ${o.number}: a greeting, press a key, hear it said back, leave a message.`,
    '  With sipp (the call is answered; sipp hangs up after 8 s and plays no audio of its own):',
    `  sipp -sn uac -s ${shellQuote(o.number)}${peer} -m 1 -d 8000 ${sip}`,
    '  With baresip (hear it, press keys): put this line in ~/.baresip/accounts',
    `  <${account}>;auth_pass=${o.client.password}`,
    `  then start baresip and type: /dial ${o.number}`,
    '',
    'REST (paste as is):',
    indent(rest),
    TRY_IT_END,
  ].join('\n');
}
