/**
 * The conference actor (spec §Conferences; Restcomm's statuses, Twilio's Participants). One per live
 * conference on this node, created by its first participant's `<Dial><Conference>`.
 *
 * States (REST status in brackets, from tags):
 * - initializing [RUNNING_INITIALIZING]: created; the first participant is on its way in.
 * - absent [RUNNING_MODERATOR_ABSENT]: nobody with startConferenceOnEnter yet; participants wait
 *   outside the mixer (hearing their waitUrl).
 * - present [RUNNING_MODERATOR_PRESENT]: started; participants join the mixer as they arrive.
 * - stopping [STOPPING]: ended (API `Status=completed`, a participant with endConferenceOnExit
 *   left, the node stops): every participant is sent out of the room and its `<Dial>` continues;
 *   completes when the last has left (or after STOP_TIMEOUT).
 * - completed [COMPLETED]: final. The last participant leaving a running conference also ends it.
 *
 * In any running state: mute, hold and announce a participant (or all); kick one (its `<Dial>` ends).
 */
import { ConferenceStatus } from '../../store/conference-store.js';
import { conferenceSetup, initialContext } from './conference.setup.js';
import type { ConferenceEffects } from './conference-effects.js';

export function createConferenceMachine(fx: ConferenceEffects) {
  const running = {
    'http.mute': { guard: 'isParticipant', actions: 'mute' },
    'call.muted': { guard: 'isParticipant', actions: 'mute' },
    'http.hold': { guard: 'isParticipant', actions: 'hold' },
    'http.announce': { actions: 'announce' },
    'http.kick': { guard: 'isParticipant', actions: 'kick' },
  } as const;
  return conferenceSetup(fx).createMachine({
    id: 'conference',
    context: ({ input }) => initialContext(input),
    initial: 'initializing',
    entry: 'emitCreated',
    states: {
      initializing: {
        tags: [ConferenceStatus.Initializing],
        on: {
          'participant.enter': [
            { guard: 'startsConference', target: 'present', actions: 'addParticipant' },
            { target: 'absent', actions: 'addParticipant' },
          ],
          'http.end': { target: 'completed', actions: 'endedByApi' },
          'node.stop': { target: 'completed', actions: 'endedByNodeStop' },
        },
      },
      absent: {
        tags: [ConferenceStatus.ModeratorAbsent],
        entry: 'emitAbsent',
        on: {
          ...running,
          'participant.enter': [
            { guard: 'startsConference', target: 'present', actions: 'addParticipant' },
            { actions: 'addParticipant' },
          ],
          'participant.exit': [
            {
              guard: 'isLastToLeave',
              target: 'completed',
              actions: ['removeParticipant', 'endedByLastExit'],
            },
            { actions: 'removeParticipant' },
          ],
          'http.end': { target: 'stopping', actions: 'endedByApi' },
          'node.stop': { target: 'stopping', actions: 'endedByNodeStop' },
        },
      },
      present: {
        tags: [ConferenceStatus.ModeratorPresent],
        entry: ['start', 'emitPresent'],
        on: {
          ...running,
          'participant.enter': { actions: 'addParticipant' },
          'participant.exit': [
            { guard: 'endsOnExit', target: 'stopping', actions: ['endedByModerator', 'removeParticipant'] },
            {
              guard: 'isLastToLeave',
              target: 'completed',
              actions: ['removeParticipant', 'endedByLastExit'],
            },
            { actions: 'removeParticipant' },
          ],
          'http.end': { target: 'stopping', actions: 'endedByApi' },
          'node.stop': { target: 'stopping', actions: 'endedByNodeStop' },
        },
      },
      stopping: {
        tags: [ConferenceStatus.Stopping],
        entry: ['emitStopping', 'releaseAll'],
        always: { guard: 'isEmpty', target: 'completed' },
        after: { STOP_TIMEOUT: 'completed' },
        on: {
          ...running,
          'participant.exit': { actions: 'removeParticipant' },
        },
      },
      completed: {
        tags: [ConferenceStatus.Completed],
        type: 'final',
        entry: 'emitCompleted',
      },
    },
  });
}

export type ConferenceMachine = ReturnType<typeof createConferenceMachine>;
