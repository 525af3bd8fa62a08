/**
 * `<Dial>`: connect the caller to another party (TwiML https://www.twilio.com/docs/voice/twiml/dial).
 * Nouns Number, Client and Sip (or bare text as a number) go to the `Dialer`, which rings them in
 * parallel, bridges the first to answer and resolves when the bridge is over. `<Conference>` joins the
 * call's endpoint to a media mixer room scoped by account (`AC…:name`) until it leaves the room;
 * `ConferenceRooms` holds the room's conference actor: startConferenceOnEnter (the others wait outside
 * the mixer, hearing waitUrl), endConferenceOnEnter (its leaving ends the room for all),
 * maxParticipants (beyond: `failed`), REST mute/hold/announce, and kicks and conference ends, after
 * which the `<Dial>` continues (its action, else the next verb) as in Twilio.
 *
 * Outcome: with `action`, request it with DialCallStatus, DialCallSid, DialCallDuration (plus
 * DialSipResponseCode and RecordingUrl/RecordingSid/RecordingDuration when known); without, continue
 * with the next verb (Twilio). Stopping the verb (caller hung up, REST redirect) aborts the dial,
 * which ends the legs it started, or leaves the conference.
 */
import { fromPromise } from 'xstate';
import { CONFERENCE_CALLBACK_EVENTS, type ConferenceCallback } from '../../conference/conference.types.js';
import type { VerbInput, VerbOutcome } from '../interpreter.types.js';
import {
  type ClientAttrs,
  type ConferenceAttrs,
  type DialAttrs,
  dialAttrs,
  type NumberAttrs,
  type SipAttrs,
  type VerbNode,
} from '../markup/index.js';
import { resolveUrl } from '../params.js';
import type { DialOutcome, DialTarget, InterpreterServices } from '../services.js';
import { enterRoom, type RoomJoin, type StayOutcome, stayInRoom } from './conference-join.js';
import { ConferenceRooms } from './conference-rooms.js';
import { attrsOf, HANGUP, NEXT, type VerbDefinition } from './support.js';

export { type DialAttrs, dialAttrs };

type Attrs<A> = Readonly<Record<string, unknown>> & A;

/** The Dialer targets of a `<Dial>` node (its nouns, or its text as one number). */
export function dialTargets(node: VerbNode, documentUrl: string): DialTarget[] {
  const url = (u: string | null) => (u === null ? null : resolveUrl(u, documentUrl));
  if (node.children.length === 0 && node.text !== null) {
    return [{ kind: 'number', number: node.text, sendDigits: null, url: null, method: 'POST' }];
  }
  const out: DialTarget[] = [];
  for (const n of node.children) {
    const text = n.text ?? '';
    if (n.verb === 'Number') {
      const a = n.attrs as Attrs<NumberAttrs>;
      out.push({ kind: 'number', number: text, sendDigits: a.sendDigits, url: url(a.url), method: a.method });
    } else if (n.verb === 'Client') {
      const a = n.attrs as Attrs<ClientAttrs>;
      out.push({ kind: 'client', name: text, url: url(a.url), method: a.method });
    } else if (n.verb === 'Sip') {
      const a = n.attrs as Attrs<SipAttrs>;
      out.push({
        kind: 'sip',
        uri: text,
        username: a.username,
        password: a.password,
        url: url(a.url),
        method: a.method,
      });
    }
  }
  return out;
}

/** Parameters posted to the Dial action for an outcome. */
export function dialParams(outcome: DialOutcome): Array<readonly [string, string]> {
  const params: Array<readonly [string, string]> = [['DialCallStatus', outcome.status]];
  if (outcome.dialCallSid) params.push(['DialCallSid', outcome.dialCallSid]);
  params.push(['DialCallDuration', String(Math.max(0, Math.round(outcome.durationSeconds)))]);
  if (outcome.sipResponseCode) params.push(['DialSipResponseCode', String(outcome.sipResponseCode)]);
  if (outcome.recording) {
    params.push(
      ['RecordingUrl', outcome.recording.url],
      ['RecordingSid', outcome.recording.sid],
      ['RecordingDuration', String(Math.round(outcome.recording.durationSeconds))],
    );
  }
  return params;
}

/** `<Conference statusCallback…>`: Twilio's default events are start and end. */
function conferenceCallback(a: Attrs<ConferenceAttrs>, documentUrl: string): ConferenceCallback | null {
  const url = a.statusCallback === null ? null : resolveUrl(a.statusCallback, documentUrl);
  if (url === null) return null;
  const named = (a.statusCallbackEvent ?? 'start end').split(/[\s,]+/);
  const events = CONFERENCE_CALLBACK_EVENTS.filter((e) => named.includes(e));
  return { url, method: a.statusCallbackMethod, events };
}

async function joinConference(
  services: InterpreterServices,
  rooms: ConferenceRooms,
  input: VerbInput,
  signal: AbortSignal,
  room: VerbNode,
): Promise<DialOutcome | null> {
  const a = room.attrs as Attrs<ConferenceAttrs>;
  const endpointId = input.call.endpointId;
  const join: RoomJoin = {
    accountSid: input.call.accountSid,
    friendlyName: room.text ?? '',
    apiVersion: input.call.apiVersion,
    callSid: input.call.callSid,
    muted: a.muted,
    startConferenceOnEnter: a.startConferenceOnEnter,
    endConferenceOnExit: a.endConferenceOnEnter,
    maxParticipants: a.maxParticipants,
    beep: a.beep !== 'false',
    waitUrl: a.waitUrl === null ? null : resolveUrl(a.waitUrl, input.documentUrl),
    statusCallback: conferenceCallback(a, input.documentUrl),
  };
  const joinedAt = Date.now();
  // In a cluster the room may run on another node (remote-conferences.ts); alone, it runs here.
  let how: StayOutcome | 'failed';
  if (services.remoteConferences) {
    how = await services.remoteConferences.join(join, endpointId, input.opId, signal);
  } else {
    const seat = enterRoom(services, rooms, join, endpointId, input.opId);
    how = seat ? await stayInRoom(services, join, seat, endpointId, input.opId, signal) : 'failed';
  }
  if (how === 'failed') return { status: 'failed', dialCallSid: null, durationSeconds: 0 };
  if (how === 'gone') return null;
  return {
    status: 'completed',
    dialCallSid: null,
    durationSeconds: (Date.now() - joinedAt) / 1000,
  };
}

/** The `<Dial>` verb. */
export const dialVerb: VerbDefinition = {
  name: 'Dial',
  attrs: dialAttrs,
  media: true,
  logic: (services: InterpreterServices) => {
    // The rooms of this node: shared with the REST layer when the composition gives them.
    const rooms = services.conferences ?? new ConferenceRooms();
    return fromPromise<VerbOutcome, VerbInput>(async ({ input, signal }) => {
      const a = attrsOf<DialAttrs>(input);
      const room = input.node.children.find((c) => c.verb === 'Conference');
      let outcome: DialOutcome | null;
      if (room) outcome = await joinConference(services, rooms, input, signal, room);
      else {
        outcome = await services.dialer.dial(
          {
            callSid: input.call.callSid,
            accountSid: input.call.accountSid,
            endpointId: input.call.endpointId,
            callerId: a.callerId ?? input.call.from,
            targets: dialTargets(input.node, input.documentUrl),
            timeoutSeconds: a.timeout,
            timeLimitSeconds: a.timeLimit,
            record: a.record,
            hangupOnStar: a.hangupOnStar,
          },
          signal,
        );
      }
      if (outcome === null) return HANGUP;
      if (a.action === null) return NEXT;
      const url = resolveUrl(a.action, input.documentUrl) ?? input.documentUrl;
      return { kind: 'fetch', url, method: a.method, params: dialParams(outcome) };
    });
  },
};
