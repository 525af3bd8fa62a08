/**
 * Conferences (spec §Conferences; Restcomm's statuses, Twilio's end members): the record of each
 * conference, written by the conference actor's record writer as it starts, changes status and
 * ends. Participants are live state of the actor, not stored.
 */

/** Restcomm's conference statuses (the wire values). */
export const ConferenceStatus = {
  Initializing: 'RUNNING_INITIALIZING',
  ModeratorAbsent: 'RUNNING_MODERATOR_ABSENT',
  ModeratorPresent: 'RUNNING_MODERATOR_PRESENT',
  Stopping: 'STOPPING',
  Completed: 'COMPLETED',
  Failed: 'FAILED',
} as const;
export type ConferenceStatus = (typeof ConferenceStatus)[keyof typeof ConferenceStatus];
export const CONFERENCE_STATUSES: readonly ConferenceStatus[] = Object.values(ConferenceStatus);

/**
 * Why a conference ended (Twilio `reason_conference_ended`): the last participant left, one with
 * endConferenceOnExit left, the API ended it, or the node stopped.
 */
export const ConferenceEndReason = {
  LastParticipantLeft: 'last-participant-left',
  ModeratorLeft: 'participant-with-end-conference-on-exit-left',
  ApiEnded: 'conference-ended-via-api',
  NodeStopped: 'node-stopped',
} as const;
export type ConferenceEndReason = (typeof ConferenceEndReason)[keyof typeof ConferenceEndReason];

export interface ConferenceRecord {
  readonly sid: string;
  readonly accountSid: string;
  readonly friendlyName: string;
  readonly status: ConferenceStatus;
  readonly apiVersion: string;
  readonly reasonConferenceEnded: ConferenceEndReason | null;
  readonly callSidEndingConference: string | null;
  readonly dateCreated: Date;
  readonly dateUpdated: Date;
}

export interface ConferenceFilter {
  readonly accountSid: string;
  readonly status?: ConferenceStatus | undefined;
  readonly friendlyName?: string | undefined;
  /** date_created within [from, to] (inclusive). */
  readonly createdFrom?: Date | undefined;
  readonly createdTo?: Date | undefined;
  readonly updatedFrom?: Date | undefined;
  readonly updatedTo?: Date | undefined;
}

/** What changes on a conference's record as it runs. */
export type ConferenceUpdate = Partial<
  Pick<ConferenceRecord, 'status' | 'reasonConferenceEnded' | 'callSidEndingConference'>
> & { readonly dateUpdated: Date };

export interface ConferenceStore {
  /** Writes a new conference; idempotent by sid. */
  insert(c: ConferenceRecord): Promise<void>;
  update(sid: string, patch: ConferenceUpdate): Promise<void>;
  get(accountSid: string, sid: string): Promise<ConferenceRecord | null>;
  /** Most recent first. */
  list(
    filter: ConferenceFilter,
    page: { offset: number; limit: number },
  ): Promise<{ total: number; items: ConferenceRecord[] }>;
}
