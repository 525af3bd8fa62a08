/**
 * Conferences and Participants (spec §Conferences; Restcomm's members and statuses, Twilio's
 * commands). Conferences are read from their records (table `conferences`), a live one from its
 * actor; participants are live only (the actor's). Beyond Restcomm, as Twilio: `Status=completed`
 * ends a conference, `AnnounceUrl` plays to all or to one participant, Mute/Hold change one
 * participant (a parameter not given changes nothing), DELETE kicks one. Another account's
 * conference is not found. See docs/conferences.md.
 */
import type { Request, Response } from 'express';
import type { ConferenceEvent } from '../../actors/conference/conference.types.js';
import type {
  CommandResult,
  LiveConference,
  LiveConferences,
} from '../../actors/interpreter/verbs/conference-rooms.js';
import { parseFilterDate } from '../../dates.js';
import { AppError } from '../../errors.js';
import {
  CONFERENCE_STATUSES,
  type ConferenceRecord,
  type ConferenceStore,
} from '../../store/conference-store.js';
import { accountOf, formatOf } from '../context.js';
import { empty, one, page, type RouteSpec } from '../openapi/spec.js';
import { pageEnvelope, parsePage } from '../paging.js';
import { Params } from '../params.js';
import { Items, send, sendPage } from '../render.js';
import type { RouteTable } from '../router.js';
import { conferenceDto, liveConferenceRecord, participantDto } from '../serializers/conference.js';
import { API_ROOT } from '../uris.js';
import { urlParam } from '../validate.js';

export interface ConferenceRouteDeps {
  readonly store: ConferenceStore;
  /** The live conferences (this node's, or in a cluster wherever they run); null when SIP is disabled. */
  readonly live: LiveConferences | null;
}

const BASE = `${API_ROOT}/Accounts/:accountSid/Conferences`;

/**
 * `DateCreated=2024-05-01` is that UTC day, `DateCreated=…T10:00:00` that instant onwards;
 * `DateCreated>`/`DateCreated<` bound it (inclusive). The same for DateUpdated.
 */
function dateRange(q: Params, name: string): { from?: Date; to?: Date } {
  const parse = (key: string) => {
    const v = q.get(key);
    if (v === undefined) return undefined;
    const d = parseFilterDate(v);
    if (!d)
      throw new AppError(
        'InvalidParameter',
        `${key} must be an ISO 8601 date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)`,
      );
    return d;
  };
  const exact = q.get(name);
  const out: { from?: Date; to?: Date } = {};
  const from = parse(name) ?? parse(`${name}>`);
  const to = parse(`${name}<`);
  if (from) out.from = from;
  if (to) out.to = to;
  if (exact !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(exact) && from)
    out.to = new Date(from.getTime() + 86_399_999);
  return out;
}

export function conferenceRoutes(routes: RouteTable, deps: ConferenceRouteDeps): void {
  /** The conference as stored, or as its actor holds it while live; 404 for another account's. */
  async function find(
    res: Response,
    sid: string,
  ): Promise<{ record: ConferenceRecord; live: LiveConference | null }> {
    const accountSid = accountOf(res).sid;
    const live = (await deps.live?.get(accountSid, sid)) ?? null;
    if (live) return { record: liveConferenceRecord(live.context, live.status), live };
    const record = await deps.store.get(accountSid, sid);
    if (!record) throw new AppError('NotFound', `Conference ${sid} not found`);
    return { record, live: null };
  }

  async function command(res: Response, sid: string, event: ConferenceEvent): Promise<void> {
    const result: CommandResult =
      (await deps.live?.command(accountOf(res).sid, sid, event)) ?? 'no-conference';
    if (result === 'no-participant')
      throw new AppError('NotFound', 'Participant not found in this conference');
    if (result === 'no-conference') throw new AppError('Conflict', `Conference ${sid} is not running`);
  }

  async function participantOf(req: Request, res: Response) {
    const sid = req.params.conferenceSid as string;
    const callSid = req.params.callSid as string;
    const { live } = await find(res, sid);
    const p = live?.context.participants[callSid];
    if (!live || !p) throw new AppError('NotFound', `Participant ${callSid} not found`);
    return { sid, callSid, live };
  }

  routes.resource(BASE, {
    GET: async (req, res) => {
      const account = accountOf(res);
      const q = Params.query(req);
      const pg = parsePage(req);
      const created = dateRange(q, 'DateCreated');
      const updated = dateRange(q, 'DateUpdated');
      const { total, items } = await deps.store.list(
        {
          accountSid: account.sid,
          status: q.oneOf('Status', CONFERENCE_STATUSES),
          friendlyName: q.get('FriendlyName'),
          createdFrom: created.from,
          createdTo: created.to,
          updatedFrom: updated.from,
          updatedTo: updated.to,
        },
        { offset: pg.offset, limit: pg.pageSize },
      );
      const format = formatOf(res);
      // Only a conference whose record is not completed can be live (then its actor has the news).
      const rows = await Promise.all(
        items.map(async (c) => {
          const live = c.status === 'COMPLETED' ? null : await deps.live?.get(account.sid, c.sid);
          return conferenceDto(live ? liveConferenceRecord(live.context, live.status) : c, format);
        }),
      );
      sendPage(
        res,
        format,
        'Conferences',
        new Items('Conference', rows),
        pageEnvelope({
          req,
          format,
          path: `${API_ROOT}/Accounts/${account.sid}/Conferences`,
          page: pg,
          total,
          count: items.length,
          lastSid: items.at(-1)?.sid,
        }),
        'conferences',
      );
    },
  });

  routes.resource(`${BASE}/:conferenceSid`, {
    GET: async (req, res) => {
      const { record } = await find(res, req.params.conferenceSid as string);
      send(res, formatOf(res), 'Conference', conferenceDto(record, formatOf(res)));
    },
    POST: async (req, res) => {
      const sid = req.params.conferenceSid as string;
      await find(res, sid);
      const p = Params.body(res);
      const status = p.oneOf('Status', ['completed'] as const);
      const announceUrl = urlParam(p, 'AnnounceUrl');
      if (status === undefined && !announceUrl)
        throw new AppError('MissingParameter', 'One of Status or AnnounceUrl is required');
      const at = Date.now();
      if (announceUrl)
        await command(res, sid, { type: 'http.announce', callSid: null, url: announceUrl, at });
      if (status) await command(res, sid, { type: 'http.end', at });
      const { record } = await find(res, sid);
      send(res, formatOf(res), 'Conference', conferenceDto(record, formatOf(res)));
    },
  });

  routes.resource(`${BASE}/:conferenceSid/Participants`, {
    GET: async (req, res) => {
      const sid = req.params.conferenceSid as string;
      const { live } = await find(res, sid);
      const q = Params.query(req);
      const muted = q.bool('Muted');
      const hold = q.bool('Hold');
      const pg = parsePage(req);
      const all = live
        ? Object.values(live.context.participants).filter(
            (x) => (muted === undefined || x.muted === muted) && (hold === undefined || x.hold === hold),
          )
        : [];
      const items = all.slice(pg.offset, pg.offset + pg.pageSize);
      const format = formatOf(res);
      const rows = live ? items.map((x) => participantDto(live.context, x, format)) : [];
      sendPage(
        res,
        format,
        'Calls',
        new Items('Call', rows),
        pageEnvelope({
          req,
          format,
          path: `${API_ROOT}/Accounts/${accountOf(res).sid}/Conferences/${sid}/Participants`,
          page: pg,
          total: all.length,
          count: items.length,
          lastSid: items.at(-1)?.callSid,
        }),
        'calls',
      );
    },
  });

  routes.resource(`${BASE}/:conferenceSid/Participants/:callSid`, {
    GET: async (req, res) => {
      const { callSid, live } = await participantOf(req, res);
      const p = live.context.participants[callSid];
      if (!p) throw new AppError('NotFound', `Participant ${callSid} not found`);
      send(res, formatOf(res), 'Call', participantDto(live.context, p, formatOf(res)));
    },
    POST: async (req, res) => {
      const { sid, callSid } = await participantOf(req, res);
      const p = Params.body(res);
      const mute = p.bool('Mute');
      const hold = p.bool('Hold');
      const holdUrl = urlParam(p, 'HoldUrl') ?? null;
      const announceUrl = urlParam(p, 'AnnounceUrl');
      const at = Date.now();
      if (mute !== undefined) await command(res, sid, { type: 'http.mute', callSid, muted: mute, at });
      if (hold !== undefined) await command(res, sid, { type: 'http.hold', callSid, hold, holdUrl, at });
      if (announceUrl) await command(res, sid, { type: 'http.announce', callSid, url: announceUrl, at });
      const after = await participantOf(req, res);
      const participant = after.live.context.participants[callSid];
      if (!participant) throw new AppError('NotFound', `Participant ${callSid} not found`);
      send(res, formatOf(res), 'Call', participantDto(after.live.context, participant, formatOf(res)));
    },
    DELETE: async (req, res) => {
      const { sid, callSid } = await participantOf(req, res);
      await command(res, sid, { type: 'http.kick', callSid, at: Date.now() });
      res.status(204).end();
    },
  });

  routes.describe(BASE, CONFERENCES_SPEC);
  routes.describe(`${BASE}/:conferenceSid`, CONFERENCE_SPEC);
  routes.describe(`${BASE}/:conferenceSid/Participants`, PARTICIPANTS_SPEC);
  routes.describe(`${BASE}/:conferenceSid/Participants/:callSid`, PARTICIPANT_SPEC);
}

const CONFERENCES_SPEC: RouteSpec = {
  tag: 'Conferences',
  GET: {
    summary: 'List conferences',
    description:
      'Most recent first. A date alone is the whole UTC day; `DateCreated>`/`DateCreated<` (and DateUpdated) bound it.',
    params: [
      { name: 'Status', enum: CONFERENCE_STATUSES },
      { name: 'FriendlyName' },
      { name: 'DateCreated', type: 'date' },
      { name: 'DateUpdated', type: 'date' },
    ],
    response: page('Conference', 'conferences'),
  },
};

const CONFERENCE_SPEC: RouteSpec = {
  tag: 'Conferences',
  GET: { summary: 'Get a conference', response: one('Conference') },
  POST: {
    summary: 'End a conference or announce to it',
    description:
      '`Status=completed` ends it: every participant leaves and its `<Dial>` continues. `AnnounceUrl` (audio) plays to all participants.',
    params: [
      { name: 'Status', enum: ['completed'] },
      { name: 'AnnounceUrl', type: 'url' },
    ],
    response: one('Conference'),
  },
};

const PARTICIPANTS_SPEC: RouteSpec = {
  tag: 'Conferences',
  GET: {
    summary: 'List the live participants of a conference',
    params: [
      { name: 'Muted', type: 'boolean' },
      { name: 'Hold', type: 'boolean' },
    ],
    response: page('Participant', 'calls'),
  },
};

const PARTICIPANT_SPEC: RouteSpec = {
  tag: 'Conferences',
  GET: { summary: 'Get a participant', response: one('Participant') },
  POST: {
    summary: 'Mute, hold or announce to a participant',
    description: 'A parameter not given changes nothing. Hold plays HoldUrl (audio) looped, else silence.',
    params: [
      { name: 'Mute', type: 'boolean' },
      { name: 'Hold', type: 'boolean' },
      { name: 'HoldUrl', type: 'url' },
      { name: 'AnnounceUrl', type: 'url' },
    ],
    response: one('Participant'),
  },
  DELETE: {
    summary: 'Kick a participant',
    description: 'Its call leaves the conference and its `<Dial>` continues (action, else the next verb).',
    response: empty,
  },
};
