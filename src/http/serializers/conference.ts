/**
 * Conference and Participant DTOs (spec §Conferences: Restcomm's members and statuses; Twilio's
 * reason_conference_ended, call_sid_ending_conference and Participant members). A participant's
 * conference_sid is its real conference (not Restcomm's parent call sid).
 */
import type { ConferenceContext, Participant } from '../../actors/conference/conference.types.js';
import { rfc2822 } from '../../dates.js';
import type { ConferenceRecord } from '../../store/conference-store.js';
import type { Dto, Format } from '../render.js';
import { accountPath, uriOf } from '../uris.js';

export function conferenceDto(c: ConferenceRecord, format: Format): Dto {
  const base = `${accountPath(c.accountSid)}/Conferences/${c.sid}`;
  return {
    Sid: c.sid,
    DateCreated: rfc2822(c.dateCreated),
    DateUpdated: rfc2822(c.dateUpdated),
    AccountSid: c.accountSid,
    Status: c.status,
    ApiVersion: c.apiVersion,
    FriendlyName: c.friendlyName,
    ReasonConferenceEnded: c.reasonConferenceEnded,
    CallSidEndingConference: c.callSidEndingConference,
    Uri: uriOf(format, base),
    SubresourceUris: { Participants: uriOf(format, `${base}/Participants`) },
  };
}

/** A live conference's record as its actor holds it (fresher than the stored row). */
export function liveConferenceRecord(
  c: ConferenceContext,
  status: ConferenceRecord['status'],
): ConferenceRecord {
  return {
    sid: c.sid,
    accountSid: c.accountSid,
    friendlyName: c.friendlyName,
    status,
    apiVersion: c.apiVersion,
    reasonConferenceEnded: c.endReason,
    callSidEndingConference: c.callSidEnding,
    dateCreated: new Date(c.createdAt),
    dateUpdated: new Date(c.updatedAt),
  };
}

export function participantDto(c: ConferenceContext, p: Participant, format: Format): Dto {
  return {
    Sid: p.callSid,
    CallSid: p.callSid,
    ConferenceSid: c.sid,
    AccountSid: c.accountSid,
    DateCreated: rfc2822(new Date(p.createdAt)),
    DateUpdated: rfc2822(new Date(p.updatedAt)),
    Muted: p.muted,
    Hold: p.hold,
    StartConferenceOnEnter: p.startConferenceOnEnter,
    EndConferenceOnExit: p.endConferenceOnExit,
    // Twilio: queued while waiting for the conference to start, connected in it.
    Status: p.admitted ? 'connected' : 'queued',
    Uri: uriOf(format, `${accountPath(c.accountSid)}/Conferences/${c.sid}/Participants/${p.callSid}`),
  };
}
