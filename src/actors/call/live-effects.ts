/**
 * The call actor's effects over the real ports (SIP, media, admission, Notifications, the app
 * runner), built once by the composition root and given to `createCallMachine`.
 */
import type { MediaEvent, MediaPort } from '../../media/port.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import {
  type Flow,
  NoRouteError,
  type PlaceCall,
  parseCallTarget,
  planOutgoingRequest,
  SipNotificationCode,
  type SipPort,
  TargetError,
} from '../../sip/port.js';
import { formatSipAddress } from '../../sip/sip-uri.js';
import type { MultiProviderConfig } from '../../store/profile-store.js';
import type { MediaEvents } from '../interpreter/services.js';
import type { CallAdmission } from './admission.js';
import { isBrowserBinding } from './browser-legs.js';
import type { CallApp, CallContext, CallEvent, MarkupTarget } from './call.types.js';
import { type CallEffects, ENDPOINT_TIMEOUT_MS, MediaSetupError, PlacementError } from './call-effects.js';
import { planRefer, type TransferDeps } from './transfer.js';

/** Runs what runs a call (markup interpreter, client bridge); live handles stay in it, by sid. */
export interface AppRunner {
  start(call: CallContext, app: CallApp, send: (event: CallEvent) => void): void;
  redirect(sid: string, to: MarkupTarget): boolean;
  end(sid: string): void;
}

export interface LiveEffectsDeps {
  readonly sip: SipPort;
  readonly media: MediaPort;
  readonly mediaEvents: MediaEvents;
  readonly admission: CallAdmission;
  readonly apps: AppRunner;
  readonly notify: (input: NotifyInput) => unknown;
  readonly multiProviderOf: (accountSid: string) => Promise<MultiProviderConfig | null>;
  /** Registered contacts of a client of the account's organization (location lookup), newest first. */
  readonly locateClient: (
    accountSid: string,
    login: string,
  ) => Promise<Array<{ readonly contact: string; readonly flow: Flow }>>;
  /** SIP host advertised in From of outbound calls. */
  readonly sipHost: string;
  /** Platform default outbound proxy for numbers (SIP_OUTBOUND_PROXY). */
  readonly defaultProxy: string | null;
  readonly onAdmissionReleaseError: (err: unknown, sid: string) => void;
  /** Other calls and the numbers, for REFER (transfer.ts). */
  readonly transfers: TransferDeps;
}

export function liveCallEffects(d: LiveEffectsDeps): CallEffects {
  /** An outbound leg's endpoint, awaited while the leg is placed: resolves with its offer. */
  const createOffer = (sid: string, signal: AbortSignal, webrtc: boolean): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const done = () => {
        off();
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const off = d.mediaEvents.on(sid, (e: MediaEvent) => {
        if (e.type === 'media.endpointReady') {
          done();
          resolve(e.endpoint.sdp);
        } else if (e.type === 'media.endpointFailed' || e.type === 'media.endpointLost') {
          done();
          reject(new MediaSetupError(e.type === 'media.endpointFailed' ? e.reason : 'engine-down', sid));
        }
      });
      const timer = setTimeout(() => {
        done();
        reject(new MediaSetupError('timeout', sid));
      }, ENDPOINT_TIMEOUT_MS);
      const onAbort = () => {
        done();
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      d.media.createEndpoint(sid, webrtc ? { webrtc } : {});
    });

  const notifyNoMedia = (call: CallContext, placing: boolean) =>
    d.notify({
      accountSid: call.origin.accountSid,
      callSid: call.origin.sid,
      errorCode: SipNotificationCode.NoMediaCapacity,
      messageText: placing
        ? `Call to ${call.origin.to} not placed: no free RTP port on this node`
        : `Call ${call.origin.sid} from ${call.origin.from} refused with 503: no free RTP port on this node`,
    });

  const place = async (call: CallContext, signal: AbortSignal): Promise<PlaceCall> => {
    try {
      const target = parseCallTarget(call.origin.to);
      // The client's binding says what to offer: a browser (WS/WSS) gets a WebRTC offer.
      const bindings =
        target.kind === 'client' ? await d.locateClient(call.origin.accountSid, target.name) : [];
      const [multiProvider, sdp] = await Promise.all([
        target.kind !== 'client' ? d.multiProviderOf(call.origin.accountSid) : Promise.resolve(null),
        createOffer(call.origin.sid, signal, isBrowserBinding(bindings[0])),
      ]);
      const plan = planOutgoingRequest({
        target,
        clientContacts: bindings.map((b) => b.contact),
        multiProvider,
        ...(d.defaultProxy ? { defaultProxy: d.defaultProxy } : {}),
      });
      const fromUser = call.origin.from.replace(/^client:/, '');
      const credentials = call.origin.credentials ?? plan.credentials;
      // A client registered over TCP or WS is reached over its own connection.
      const flow = bindings[0] && bindings[0].flow.protocol !== 'UDP' ? bindings[0].flow : undefined;
      // A local 403 gets Notification 13225 (ForbiddenDestination) when the leg ends.
      const refused = flow ? null : await d.sip.checkTarget(plan.requestUri, plan.route);
      if (refused) throw new PlacementError(403, refused);
      return {
        requestUri: plan.requestUri,
        from: { uri: formatSipAddress(fromUser, d.sipHost) },
        to: { uri: plan.requestUri },
        route: plan.route,
        headers: plan.headers,
        ...(credentials ? { credentials } : {}),
        ...(flow ? { flow } : {}),
        sdp,
      };
    } catch (e) {
      if (e instanceof PlacementError || signal.aborted) throw e;
      if (e instanceof NoRouteError)
        throw new PlacementError(e.reason === 'client-not-registered' ? 480 : 503, e.message);
      if (e instanceof TargetError) throw new PlacementError(400, e.message);
      if (e instanceof MediaSetupError) {
        if (e.reason === 'no-port') notifyNoMedia(call, true);
        throw new PlacementError(503, e.message, e.reason === 'no-port');
      }
      throw e;
    }
  };

  return {
    ring: (sid) => d.sip.sendProvisional(sid, 180),
    answer: (sid, sdp) => d.sip.answer(sid, sdp),
    reject: (sid, status, reason, retryAfter) => d.sip.reject(sid, status, reason, retryAfter),
    cancel: (sid) => d.sip.cancel(sid),
    hangUp: (sid) => d.sip.hangUp(sid),
    invite: (sid, request) => d.sip.placeCall(sid, request),
    endDialog: (dialog) => d.sip.endDialog(dialog),
    createEndpoint: (sid, remoteSdp) => d.media.createEndpoint(sid, remoteSdp ? { remoteSdp } : {}),
    applyRemoteSdp: (sid, sdp) => d.media.applyRemoteSdp(sid, sdp),
    setMuted: (sid, muted) => d.media.setMuted(sid, muted),
    unbridge: (a, b) => d.media.unbridge(a, b),
    releaseMedia: (sid) => d.media.release(sid),
    startApp: (call, app, send) => d.apps.start(call, app, send),
    redirectApp: (sid, to) => d.apps.redirect(sid, to),
    endApp: (sid) => d.apps.end(sid),
    releaseAdmission: (accountSid, sid) => {
      d.admission.release(accountSid, sid).catch((err) => d.onAdmissionReleaseError(err, sid));
    },
    answerRefer: (sid, referId, status, reason) => d.sip.answerRefer(sid, referId, status, reason),
    notifyRefer: (sid, referId, status, terminated) => d.sip.notifyRefer(sid, referId, status, terminated),
    transfer: (transferee, transfer, app) =>
      queueMicrotask(() =>
        d.transfers.send(transferee, { type: 'app.transfer', transfer, app, at: Date.now() }),
      ),
    planRefer: (call) => planRefer(call, d.transfers),
    refer: (sid, referTo) => d.sip.refer(sid, referTo),
    notifyNoMedia,
    admit: (accountSid, sid, signal) => d.admission.admit(accountSid, sid, signal),
    place,
    sendDigits: async (sid, digits, signal) => {
      for (const digit of digits) {
        if (signal.aborted) return;
        if (digit === 'w' || digit === 'W') {
          await sleep(500, signal);
          continue;
        }
        d.sip.sendInfo(sid, 'application/dtmf-relay', `Signal=${digit}\r\nDuration=160\r\n`);
        await sleep(100, signal);
      }
    },
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
