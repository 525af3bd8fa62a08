/**
 * The conference machine's implementations (named, in a sibling file, so conference.machine.ts
 * reads like the state table): guards, the stop delay and the actions — context updates, domain
 * events, and the effects the composition root gives as `ConferenceEffects`.
 */
import { assign, emit, enqueueActions, setup } from 'xstate';
import { type ConferenceEndReason, ConferenceStatus } from '../../store/conference-store.js';
import type {
  ConferenceContext,
  ConferenceEmitted,
  ConferenceEvent,
  ConferenceInput,
  Participant,
} from './conference.types.js';
import type { ConferenceEffects } from './conference-effects.js';

/** How long a stopping conference waits for its participants to leave before it completes anyway. */
export const STOP_TIMEOUT_MS = 10_000;

export function initialContext(input: ConferenceInput): ConferenceContext {
  return {
    sid: input.sid,
    accountSid: input.accountSid,
    friendlyName: input.friendlyName,
    room: `${input.accountSid}:${input.friendlyName}`,
    apiVersion: input.apiVersion,
    createdAt: input.createdAt,
    updatedAt: input.createdAt,
    participants: {},
    started: false,
    statusCallback: null,
    endReason: null,
    callSidEnding: null,
  };
}

type E<T extends ConferenceEvent['type']> = Extract<ConferenceEvent, { type: T }>;
const at = (e: ConferenceEvent | { type: string }) =>
  'at' in e && typeof e.at === 'number' ? e.at : Date.now();
const callSidOf = (e: ConferenceEvent): string | null => ('callSid' in e ? e.callSid : null);

function withParticipant(
  c: ConferenceContext,
  callSid: string,
  change: Partial<Participant>,
  when: number,
): Pick<ConferenceContext, 'participants' | 'updatedAt'> {
  const p = c.participants[callSid];
  if (!p) return { participants: c.participants, updatedAt: c.updatedAt };
  return {
    participants: { ...c.participants, [callSid]: { ...p, ...change, updatedAt: when } },
    updatedAt: when,
  };
}

function without(c: ConferenceContext, callSid: string): Readonly<Record<string, Participant>> {
  const { [callSid]: _gone, ...rest } = c.participants;
  return rest;
}

const status = (s: ConferenceStatus) =>
  emit<ConferenceContext, ConferenceEvent, undefined, ConferenceEvent, ConferenceEmitted>(
    ({ context, event }) => ({ type: 'conference.status', conference: context, status: s, at: at(event) }),
  );

const ending = (reason: ConferenceEndReason, byCall: boolean) =>
  assign<ConferenceContext, ConferenceEvent, undefined, ConferenceEvent, never>(({ context, event }) => ({
    endReason: context.endReason ?? reason,
    callSidEnding: context.endReason ? context.callSidEnding : byCall ? callSidOf(event) : null,
    updatedAt: at(event),
  }));

export function conferenceSetup(fx: ConferenceEffects) {
  return setup({
    types: {
      context: {} as ConferenceContext,
      events: {} as ConferenceEvent,
      input: {} as ConferenceInput,
      emitted: {} as ConferenceEmitted,
    },
    delays: { STOP_TIMEOUT: STOP_TIMEOUT_MS },
    guards: {
      startsConference: ({ event }) =>
        event.type === 'participant.enter' && event.arrival.startConferenceOnEnter,
      isParticipant: ({ context, event }) => {
        const sid = callSidOf(event);
        return sid !== null && sid in context.participants;
      },
      /** Its exit ends the conference: a participant in the mixer with endConferenceOnExit. */
      endsOnExit: ({ context, event }) => {
        const p = event.type === 'participant.exit' ? context.participants[event.callSid] : undefined;
        return p?.admitted === true && p.endConferenceOnExit;
      },
      isLastToLeave: ({ context, event }) =>
        event.type === 'participant.exit' &&
        event.callSid in context.participants &&
        Object.keys(context.participants).length === 1,
      isEmpty: ({ context }) => Object.keys(context.participants).length === 0,
    },
    actions: {
      emitCreated: emit(({ context }) => ({
        type: 'conference.created' as const,
        conference: context,
        status: ConferenceStatus.Initializing,
        at: context.createdAt,
      })),
      /** Adds the arriving participant (admitted when the conference has started); the first callback wins. */
      addParticipant: enqueueActions(({ context, event, enqueue }) => {
        const e = event as E<'participant.enter'>;
        const a = e.arrival;
        const admitted = context.started || a.startConferenceOnEnter;
        const participant: Participant = {
          callSid: a.callSid,
          endpointId: a.endpointId,
          muted: a.muted,
          hold: false,
          startConferenceOnEnter: a.startConferenceOnEnter,
          endConferenceOnExit: a.endConferenceOnExit,
          admitted,
          createdAt: e.at,
          updatedAt: e.at,
        };
        enqueue.assign({
          participants: { ...context.participants, [a.callSid]: participant },
          statusCallback: context.statusCallback ?? a.statusCallback,
          updatedAt: e.at,
        });
        enqueue.emit(({ context: c }) => ({
          type: 'participant.joined' as const,
          conference: c,
          participant,
          at: e.at,
        }));
        if (admitted) enqueue(() => fx.admit(context.sid, a.callSid));
      }),
      /** The conference starts: every waiting participant joins the mixer. */
      start: enqueueActions(({ context, event, enqueue }) => {
        if (context.started) return;
        const when = at(event);
        const participants: Record<string, Participant> = {};
        const waiting: string[] = [];
        for (const [sid, p] of Object.entries(context.participants)) {
          if (!p.admitted) waiting.push(sid);
          participants[sid] = p.admitted ? p : { ...p, admitted: true, updatedAt: when };
        }
        enqueue.assign({ started: true, participants, updatedAt: when });
        for (const sid of waiting) enqueue(() => fx.admit(context.sid, sid));
        enqueue.emit(({ context: c }) => ({ type: 'conference.started' as const, conference: c, at: when }));
      }),
      removeParticipant: enqueueActions(({ context, event, enqueue }) => {
        const e = event as E<'participant.exit'>;
        const p = context.participants[e.callSid];
        if (!p) return;
        enqueue.assign({ participants: without(context, e.callSid), updatedAt: e.at });
        enqueue.emit(({ context: c }) => ({
          type: 'participant.left' as const,
          conference: c,
          participant: { ...p, updatedAt: e.at },
          at: e.at,
        }));
      }),
      /** Mute from the API (media) or reflected from the call (no media command); reported when it changed. */
      mute: enqueueActions(({ context, event, enqueue }) => {
        const e = event as E<'http.mute'> | E<'call.muted'>;
        const p = context.participants[e.callSid];
        if (!p) return;
        if (e.type === 'http.mute' && !p.hold) enqueue(() => fx.setMuted(e.callSid, e.muted));
        if (p.muted === e.muted) return;
        enqueue.assign(({ context: c }) => withParticipant(c, e.callSid, { muted: e.muted }, e.at));
        enqueue.emit(({ context: c }) => ({
          type: 'participant.muted' as const,
          conference: c,
          participant: c.participants[e.callSid] ?? p,
          at: e.at,
        }));
      }),
      hold: enqueueActions(({ context, event, enqueue }) => {
        const e = event as E<'http.hold'>;
        const p = context.participants[e.callSid];
        if (!p) return;
        if (e.hold) enqueue(() => fx.hold(e.callSid, e.holdUrl));
        else if (p.hold) enqueue(() => fx.unhold(e.callSid, p.muted));
        if (p.hold === e.hold) return;
        enqueue.assign(({ context: c }) => withParticipant(c, e.callSid, { hold: e.hold }, e.at));
        enqueue.emit(({ context: c }) => ({
          type: 'participant.held' as const,
          conference: c,
          participant: c.participants[e.callSid] ?? p,
          at: e.at,
        }));
      }),
      announce: ({ context, event }) => {
        const e = event as E<'http.announce'>;
        const sids = e.callSid === null ? Object.keys(context.participants) : [e.callSid];
        const inMixer = sids.filter((s) => context.participants[s]?.admitted);
        if (inMixer.length > 0) fx.announce(inMixer, e.url);
      },
      /** One participant out: from the mixer, or from the wait. */
      kick: ({ context, event }) => {
        const e = event as E<'http.kick'>;
        const p = context.participants[e.callSid];
        if (!p) return;
        if (p.admitted) fx.leave(p.callSid);
        else fx.dismiss(context.sid, p.callSid);
      },
      /** Everybody out (the conference is stopping). */
      releaseAll: ({ context }) => {
        for (const p of Object.values(context.participants)) {
          if (p.admitted) fx.leave(p.callSid);
          else fx.dismiss(context.sid, p.callSid);
        }
      },
      endedByApi: ending('conference-ended-via-api', false),
      endedByModerator: ending('participant-with-end-conference-on-exit-left', true),
      endedByLastExit: ending('last-participant-left', true),
      endedByNodeStop: ending('node-stopped', false),
      emitAbsent: status(ConferenceStatus.ModeratorAbsent),
      emitPresent: status(ConferenceStatus.ModeratorPresent),
      emitStopping: status(ConferenceStatus.Stopping),
      emitCompleted: emit(({ context, event }) => ({
        type: 'conference.ended' as const,
        conference: context,
        status: ConferenceStatus.Completed,
        at: at(event),
      })),
    },
  });
}
