/**
 * A bare SIP answerer for bench:sip: our transports + the `sip` transaction layer + our dialog
 * layer (SipStack + SipLegs), answering every INVITE with 200 and a fixed SDP, so the benchmark
 * measures what the SIP core itself costs per call. Usage: tsx ops/bench/sip-answerer.ts HOST PORT
 */
import { pino } from 'pino';
import { SipLegs } from '../../src/sip/legs.js';
import { tagOf } from '../../src/sip/message.js';
import { SipStack } from '../../src/sip/stack.js';

const [host = '127.0.0.1', port = '5080'] = process.argv.slice(2);
const log = pino({ level: 'warn' });
const stack = new SipStack(
  { host, port: Number(port), publicAddress: host, udp: true, tcp: false, wsPort: null },
  log,
);
const legs = new SipLegs(stack, log);
const SDP = [
  'v=0',
  `o=- 1 1 IN IP4 ${host}`,
  's=-',
  `c=IN IP4 ${host}`,
  't=0 0',
  'm=audio 40000 RTP/AVP 0',
  'a=rtpmap:0 PCMU/8000',
  '',
].join('\r\n');
legs.onInvite((invite) => legs.answer(invite.legId, SDP));
stack.onRequest((rq, flow) => {
  const inDialog = tagOf(rq.headers.to) !== undefined;
  if (rq.method === 'INVITE' && !inDialog) legs.acceptInvite(rq, flow);
  else if (rq.method === 'CANCEL') legs.onCancel(rq);
  else if (inDialog) legs.onInDialog(rq);
  else stack.respond(rq, 501);
});
await stack.start();
process.send?.({ ready: true });
process.on('SIGTERM', () => {
  void stack.close().then(() => process.exit(0));
});
