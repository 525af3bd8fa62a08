/**
 * Everything that follows a conference without being part of it: its record in the system of
 * record, and its status callbacks (Twilio ConferenceStatusCallback). Observers of the actor's
 * domain events (conference.types.ts `ConferenceEmitted`), run one event at a time per conference,
 * in order (the record is inserted before it is updated; callbacks keep their sequence numbers).
 */
import type { Logger } from '../../logger.js';
import { type ConferenceStore, ConferenceStatus as S } from '../../store/conference-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import { type Observer, OrderedEventBus } from '../ordered-event-bus.js';
import type {
  ConferenceCallbackEvent,
  ConferenceContext,
  ConferenceEmitted,
  Participant,
} from './conference.types.js';

export type ConferenceObserver = Observer<ConferenceEmitted>;

/** The conferences' event bus: a conference's events in order, conferences independent. */
export class ConferenceEventBus extends OrderedEventBus<ConferenceEmitted> {
  constructor(logger: Logger) {
    super(logger, (e) => e.conference.sid, { key: 'conferenceSid', kind: 'conference' });
  }
}

/** The conference's record (table `conferences`). */
export function recordWriter(
  store: Pick<ConferenceStore, 'insert' | 'update'>,
  logger: Logger,
): ConferenceObserver {
  return async (e) => {
    const c = e.conference;
    try {
      switch (e.type) {
        case 'conference.created':
          await store.insert({
            sid: c.sid,
            accountSid: c.accountSid,
            friendlyName: c.friendlyName,
            status: S.Initializing,
            apiVersion: c.apiVersion,
            reasonConferenceEnded: null,
            callSidEndingConference: null,
            dateCreated: new Date(c.createdAt),
            dateUpdated: new Date(c.createdAt),
          });
          return;
        case 'conference.status':
          await store.update(c.sid, { status: e.status, dateUpdated: new Date(e.at) });
          return;
        case 'conference.ended':
          await store.update(c.sid, {
            status: e.status,
            reasonConferenceEnded: c.endReason,
            callSidEndingConference: c.callSidEnding,
            dateUpdated: new Date(e.at),
          });
          return;
        default:
          return;
      }
    } catch (err) {
      logger.warn({ err, conferenceSid: c.sid }, 'conference record not written');
    }
  };
}

/** Sends a signed callback about a conference (with its account's AuthToken). */
export type SendConferenceCallback = (
  accountSid: string,
  conferenceSid: string,
  url: string,
  method: HttpMethod,
  params: Record<string, string>,
) => Promise<void>;

/** The callback event and the `statusCallbackEvent` that asks for it, of a domain event. */
function callbackEventOf(e: ConferenceEmitted): [string, ConferenceCallbackEvent] | null {
  switch (e.type) {
    case 'conference.started':
      return ['conference-start', 'start'];
    case 'conference.ended':
      return ['conference-end', 'end'];
    case 'participant.joined':
      return ['participant-join', 'join'];
    case 'participant.left':
      return ['participant-leave', 'leave'];
    case 'participant.muted':
      return [e.participant.muted ? 'participant-mute' : 'participant-unmute', 'mute'];
    case 'participant.held':
      return [e.participant.hold ? 'participant-hold' : 'participant-unhold', 'hold'];
    default:
      return null;
  }
}

function participantParams(p: Participant): Record<string, string> {
  return {
    CallSid: p.callSid,
    Muted: String(p.muted),
    Hold: String(p.hold),
    Coaching: 'false',
    EndConferenceOnExit: String(p.endConferenceOnExit),
    StartConferenceOnEnter: String(p.startConferenceOnEnter),
  };
}

/** Twilio's conference status callback parameters for one event. */
export function conferenceCallbackParams(
  c: Pick<ConferenceContext, 'sid' | 'friendlyName' | 'accountSid' | 'endReason' | 'callSidEnding'>,
  event: string,
  sequence: number,
  at: number,
  participant: Participant | null,
): Record<string, string> {
  return {
    ConferenceSid: c.sid,
    FriendlyName: c.friendlyName,
    AccountSid: c.accountSid,
    SequenceNumber: String(sequence),
    Timestamp: new Date(at).toUTCString(),
    StatusCallbackEvent: event,
    ...(participant ? participantParams(participant) : {}),
    ...(event === 'conference-end'
      ? {
          ReasonConferenceEnded: c.endReason ?? '',
          ...(c.callSidEnding ? { CallSidEndingConference: c.callSidEnding } : {}),
        }
      : {}),
  };
}

/** `<Conference statusCallback>` requests for the events it asked for (default start and end). */
export function statusCallbacks(send: SendConferenceCallback, logger: Logger): ConferenceObserver {
  const sequences = new Map<string, number>();
  return async (e) => {
    const c = e.conference;
    const sequence = (sequences.get(c.sid) ?? 0) + 1;
    if (e.type === 'conference.ended') sequences.delete(c.sid);
    else sequences.set(c.sid, sequence);
    const cb = c.statusCallback;
    const which = callbackEventOf(e);
    if (!cb || !which || !cb.events.includes(which[1])) return;
    const participant = 'participant' in e ? e.participant : null;
    try {
      await send(
        c.accountSid,
        c.sid,
        cb.url,
        cb.method,
        conferenceCallbackParams(c, which[0], sequence, e.at, participant),
      );
    } catch (err) {
      logger.warn({ err, conferenceSid: c.sid }, 'conference status callback not sent');
    }
  };
}
