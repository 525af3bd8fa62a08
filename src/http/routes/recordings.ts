/**
 * Recordings (spec §Endpoints › Recordings): list (account-wide and per call) with StartTime,
 * EndTime, CallSid, Page, PageSize, SortBy; get; delete (not ProvisioningAgent); `{sid}.wav` serves
 * the audio without authentication, with byte ranges.
 */
import type { Request, Response } from 'express';
import { AppError } from '../../errors.js';
import { isSid, SidPrefix } from '../../ids.js';
import type { RecordingService } from '../../recordings/recording-service.js';
import type { RecordingStorage } from '../../recordings/storage.js';
import { Role } from '../../store/account-store.js';
import { RECORDING_SORT, type RecordingStore } from '../../store/recording-store.js';
import { accountOf, callerOf, formatOf } from '../context.js';
import { empty, one, page, type RouteSpec } from '../openapi/spec.js';
import { pageEnvelope, parsePage, parseSort } from '../paging.js';
import { Params } from '../params.js';
import { Items, send, sendPage } from '../render.js';
import type { RouteTable } from '../router.js';
import { recordingDto } from '../serializers/records.js';
import { API_ROOT } from '../uris.js';
import { dateRange } from './notifications.js';

export interface RecordingRouteDeps {
  readonly recordings: RecordingStore;
  readonly recordingService: RecordingService;
  readonly recordingStorage: RecordingStorage;
  readonly publicUrl: string;
}

export const WAV_CONTENT_TYPE = 'audio/x-wav';

/** Parses a single `bytes=a-b` / `bytes=a-` / `bytes=-n` range; null = whole file; 'invalid' = 416. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | 'invalid' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'invalid';
  let start: number;
  let end: number;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'invalid';
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start > end || start >= size ? 'invalid' : { start, end };
}

export function recordingRoutes(routes: RouteTable, deps: RecordingRouteDeps): void {
  const list = (byCall: boolean) => async (req: Request, res: Response) => {
    const account = accountOf(res);
    const q = Params.query(req);
    const page = parsePage(req);
    const sort = parseSort(req, RECORDING_SORT, 'DateCreated');
    const range = dateRange(q);
    const callSid = byCall ? (req.params.callSid as string) : q.get('CallSid');
    const { total, items } = await deps.recordings.list(
      { accountSid: account.sid, callSid, startTime: range.start, endTime: range.end },
      sort,
      { offset: page.offset, limit: page.pageSize },
    );
    const format = formatOf(res);
    const path = `${API_ROOT}/Accounts/${account.sid}${byCall ? `/Calls/${callSid}` : ''}/Recordings`;
    sendPage(
      res,
      format,
      'Recordings',
      new Items(
        'Recording',
        items.map((r) => recordingDto(r, format, deps.publicUrl)),
      ),
      pageEnvelope({ req, format, path, page, total, count: items.length, lastSid: items.at(-1)?.sid }),
      'recordings',
    );
  };

  const serveWav = async (req: Request, res: Response, sid: string) => {
    const rec = isSid(sid, SidPrefix.Recording) ? await deps.recordings.getAnyAccount(sid) : null;
    // The account in the path must be the recording's: a public URL still names one resource only.
    const size =
      rec && rec.accountSid === req.params.accountSid ? await deps.recordingStorage.size(sid) : null;
    if (!rec || size === null) throw new AppError('NotFound', `Recording ${sid} not found`);
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Content-Type', WAV_CONTENT_TYPE);
    const range = parseRange(req.headers.range, size);
    if (range === 'invalid') {
      res.setHeader('Content-Range', `bytes */${size}`);
      throw new AppError(
        'RangeNotSatisfiable',
        `Range ${req.headers.range} is outside the ${size}-byte recording`,
      );
    }
    const { start, end } = range ?? { start: 0, end: size - 1 };
    if (range) {
      res.status(206);
      res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
    }
    res.setHeader('Content-Length', end - start + 1);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = deps.recordingStorage.read(sid, start, end);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  };

  routes.resource(`${API_ROOT}/Accounts/:accountSid/Recordings`, { GET: list(false) });
  routes.resource(`${API_ROOT}/Accounts/:accountSid/Calls/:callSid/Recordings`, { GET: list(true) });
  routes.resource(
    `${API_ROOT}/Accounts/:accountSid/Recordings/:recordingSid`,
    {
      GET: async (req, res) => {
        const sid = req.params.recordingSid as string;
        if (sid.endsWith('.wav')) return serveWav(req, res, sid.slice(0, -4));
        const rec = await deps.recordings.get(accountOf(res).sid, sid);
        if (!rec) throw new AppError('NotFound', `Recording ${sid} not found`);
        send(res, formatOf(res), 'Recording', recordingDto(rec, formatOf(res), deps.publicUrl));
      },
      DELETE: async (req, res) => {
        if (callerOf(res).role === Role.ProvisioningAgent) {
          throw new AppError('Forbidden', 'A ProvisioningAgent may not remove recordings');
        }
        const sid = (req.params.recordingSid as string).replace(/\.wav$/, '');
        if (!(await deps.recordingService.delete(accountOf(res).sid, sid))) {
          throw new AppError('NotFound', `Recording ${sid} not found`);
        }
        res.status(204).end();
      },
    },
    {
      publicWhen: (req) =>
        (req.method === 'GET' || req.method === 'HEAD') &&
        /\.wav$/.test(String(req.params.recordingSid ?? '')),
    },
  );

  routes.describe(`${API_ROOT}/Accounts/:accountSid/Recordings`, recordingsSpec(false));
  routes.describe(`${API_ROOT}/Accounts/:accountSid/Calls/:callSid/Recordings`, recordingsSpec(true));
  routes.describe(`${API_ROOT}/Accounts/:accountSid/Recordings/:recordingSid`, RECORDING_SPEC);
}

function recordingsSpec(byCall: boolean): RouteSpec {
  return {
    tag: 'Recordings',
    GET: {
      summary: byCall ? "List a call's recordings" : 'List recordings',
      params: [
        { name: 'StartTime', type: 'date' },
        { name: 'EndTime', type: 'date' },
        ...(byCall ? [] : [{ name: 'CallSid', type: 'sid' } as const]),
        {
          name: 'SortBy',
          description: `<attribute>:<asc|desc>, attribute one of ${RECORDING_SORT.join(', ')}`,
        },
      ],
      response: page('Recording', 'recordings'),
    },
  };
}

const RECORDING_SPEC: RouteSpec = {
  tag: 'Recordings',
  GET: {
    summary: 'Get a recording',
    description: `\`{recordingSid}.wav\` (instead of \`.json\`) serves the audio (${WAV_CONTENT_TYPE}) without authentication, with byte ranges.`,
    response: one('Recording'),
  },
  DELETE: { summary: 'Delete a recording', response: empty },
};
