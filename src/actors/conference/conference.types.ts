/**
 * Types of the conference actor: one per live conference on this node (spec §Conferences, Restcomm's
 * statuses; Twilio's Participants). Context is plain data; the participants' live media handles stay
 * in the registry (`ConferenceRooms`), keyed by call sid.
 */

import type { ConferenceEndReason, ConferenceStatus } from '../../store/conference-store.js';
import type { HttpMethod } from '../../webhooks/index.js';

/** `statusCallbackEvent` values of `<Conference>` (Twilio). */
export const CONFERENCE_CALLBACK_EVENTS = ['start', 'end', 'join', 'leave', 'mute', 'hold'] as const;
export type ConferenceCallbackEvent = (typeof CONFERENCE_CALLBACK_EVENTS)[number];

/** Where the conference's status callbacks go (`<Conference statusCallback>`). */
export interface ConferenceCallback {
  readonly url: string;
  readonly method: HttpMethod;
  readonly events: readonly ConferenceCallbackEvent[];
}

/** A participant (Twilio Participant resource): a call in the conference. */
export interface Participant {
  readonly callSid: string;
  /** The call's media endpoint (usually the call sid). */
  readonly endpointId: string;
  readonly muted: boolean;
  readonly hold: boolean;
  readonly startConferenceOnEnter: boolean;
  readonly endConferenceOnExit: boolean;
  /** In the mixer; false while waiting for a participant with startConferenceOnEnter. */
  readonly admitted: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface ConferenceContext {
  readonly sid: string;
  readonly accountSid: string;
  readonly friendlyName: string;
  /** The media engine's mixer name (`AC…:name`). */
  readonly room: string;
  readonly apiVersion: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Participants by call sid, in arrival order. */
  readonly participants: Readonly<Record<string, Participant>>;
  /** A participant with startConferenceOnEnter has arrived (Twilio `conference-start`). */
  readonly started: boolean;
  readonly statusCallback: ConferenceCallback | null;
  readonly endReason: ConferenceEndReason | null;
  readonly callSidEnding: string | null;
}

export interface ConferenceInput {
  readonly sid: string;
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly apiVersion: string;
  readonly createdAt: number;
}

/** What a participant brings when it enters (the `<Conference>` attributes of its call). */
export interface Arrival {
  readonly callSid: string;
  readonly endpointId: string;
  readonly muted: boolean;
  readonly startConferenceOnEnter: boolean;
  readonly endConferenceOnExit: boolean;
  readonly statusCallback: ConferenceCallback | null;
}

/** Events into the actor, named by source (STYLE). */
export type ConferenceEvent =
  | { type: 'participant.enter'; arrival: Arrival; at: number }
  | { type: 'participant.exit'; callSid: string; at: number }
  /** The call's own mute changed (REST Mute on the call): reflected, nothing sent to the media. */
  | { type: 'call.muted'; callSid: string; muted: boolean; at: number }
  | { type: 'http.mute'; callSid: string; muted: boolean; at: number }
  | { type: 'http.hold'; callSid: string; hold: boolean; holdUrl: string | null; at: number }
  /** Plays `url` to one participant, or to all when `callSid` is null. */
  | { type: 'http.announce'; callSid: string | null; url: string; at: number }
  | { type: 'http.kick'; callSid: string; at: number }
  | { type: 'http.end'; at: number }
  /** The node is stopping: the conference ends with it. */
  | { type: 'node.stop'; at: number };

/** Domain events the actor emits; the record writer and the status callbacks observe them. */
export type ConferenceEmitted =
  | { type: 'conference.created'; conference: ConferenceContext; status: ConferenceStatus; at: number }
  | { type: 'conference.status'; conference: ConferenceContext; status: ConferenceStatus; at: number }
  | { type: 'conference.started'; conference: ConferenceContext; at: number }
  | { type: 'conference.ended'; conference: ConferenceContext; status: ConferenceStatus; at: number }
  | { type: 'participant.joined'; conference: ConferenceContext; participant: Participant; at: number }
  | { type: 'participant.left'; conference: ConferenceContext; participant: Participant; at: number }
  | { type: 'participant.muted'; conference: ConferenceContext; participant: Participant; at: number }
  | { type: 'participant.held'; conference: ConferenceContext; participant: Participant; at: number };
