/**
 * The USSD runtime: the registry of this node's USSD session actors, fed by the SIP adapter's
 * events for their legs. It starts sessions — a handset's INVITE with a USSD body (routed by
 * ussd-routing.ts) or a REST push — writes each session's Call record (a Call of the account like
 * any other, `type` USSD in the live views) and follows its domain events: the record, the
 * supervisor's live views (as call events of a `channel: 'ussd'` call) and a push's StatusCallback.
 *
 * Sessions are short and live on the node that holds their dialog: they are not snapshotted.
 */
import { type Actor, createActor } from 'xstate';
import { newSid, SidPrefix } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { NotifyInput } from '../../notifications/notifier.js';
import type { InboundInvite, SipEvent, SipPort } from '../../sip/port.js';
import { type CallRecord, CallStatus, type CallStore } from '../../store/call-store.js';
import type { HttpMethod } from '../../webhooks/index.js';
import type { CallObserver } from '../call/call-observers.js';
import { answeredSeconds, newRecord } from '../call/records.js';
import type { UssdMachine } from './ussd.machine.js';
import type { UssdEmitted, UssdEvent, UssdInput } from './ussd.types.js';
import { isUssdContentType } from './ussd-body.js';
import type { UssdRoute } from './ussd-routing.js';
import { callViewOf } from './ussd-view.js';

export interface UssdRuntimeDeps {
  readonly sip: Pick<SipPort, 'reject'> & { onEvent(listener: (e: SipEvent) => void): () => void };
  readonly machine: UssdMachine;
  readonly calls: Pick<CallStore, 'insert' | 'patch'>;
  readonly route: (invite: InboundInvite) => Promise<UssdRoute>;
  readonly notify: (input: NotifyInput) => unknown;
  /** Live views of calls (the supervisor's): they see a session as a call of type USSD. */
  readonly observers: readonly CallObserver[];
  /** Requests a push's StatusCallback (signed with the account's token). */
  readonly sendCallback: (
    accountSid: string,
    callSid: string,
    url: string,
    method: HttpMethod,
    params: Record<string, string>,
  ) => Promise<void>;
  readonly logger: Logger;
}

/** A push as the REST API asks for it (validated there). */
export interface UssdPushRequest {
  readonly accountSid: string;
  readonly from: string;
  readonly to: string;
  readonly url: string;
  readonly method: HttpMethod;
  readonly fallback: { readonly url: string; readonly method: HttpMethod } | null;
  readonly statusCallback: { readonly url: string; readonly method: HttpMethod } | null;
  readonly apiVersion: string;
}

export class UssdRuntime {
  private readonly actors = new Map<string, Actor<UssdMachine>>();
  /** Record writes of a session, one at a time (CallStore.patch allows one in flight per call). */
  private readonly writes = new Map<string, Promise<void>>();
  private readonly off: () => void;
  private stopped = false;

  constructor(private readonly deps: UssdRuntimeDeps) {
    this.off = deps.sip.onEvent((e) => this.onSipEvent(e));
  }

  /** Live sessions on this node. */
  get size(): number {
    return this.actors.size;
  }

  /** A handset's INVITE whose body is USSD. */
  async onInvite(invite: InboundInvite): Promise<void> {
    const route: UssdRoute = this.stopped
      ? { kind: 'reject', status: 503, reason: 'Shutting Down', notify: null }
      : await this.deps.route(invite);
    if (route.kind === 'reject') {
      this.deps.sip.reject(invite.legId, route.status, route.reason);
      if (route.notify)
        this.deps.notify({
          accountSid: route.notify.accountSid,
          errorCode: route.notify.errorCode,
          messageText: `USSD session to ${invite.requestUri} rejected: ${route.reason}`,
        });
      return;
    }
    const record = newRecord({
      sid: invite.legId,
      accountSid: route.accountSid,
      from: route.from,
      to: route.to,
      direction: 'inbound',
      status: CallStatus.Ringing,
      apiVersion: route.apiVersion,
      phoneNumberSid: route.number.sid,
      callerName: invite.from.displayName ?? null,
      sipCallId: invite.callId,
    });
    await this.deps.calls.insert(record);
    this.start(record, {
      url: route.url,
      method: route.method,
      fallback: route.fallback,
      params: [],
    });
  }

  /** Starts a push session; resolves with its Call record once written (queued). */
  async push(r: UssdPushRequest): Promise<CallRecord> {
    const record = newRecord({
      sid: newSid(SidPrefix.Call),
      accountSid: r.accountSid,
      from: r.from,
      to: r.to,
      direction: 'outbound-api',
      status: CallStatus.Queued,
      apiVersion: r.apiVersion,
    });
    await this.deps.calls.insert(record);
    this.start(record, { url: r.url, method: r.method, fallback: r.fallback, params: [] }, r.statusCallback);
    return record;
  }

  stop(): void {
    this.stopped = true;
    this.off();
    for (const actor of this.actors.values()) actor.stop();
    this.actors.clear();
  }

  private start(
    record: CallRecord,
    fetch: UssdInput['fetch'],
    statusCallback: UssdInput['statusCallback'] = null,
  ): void {
    const input: UssdInput = {
      sid: record.sid,
      accountSid: record.accountSid,
      direction: record.direction === 'inbound' ? 'inbound' : 'outbound-api',
      from: record.from,
      to: record.to,
      apiVersion: record.apiVersion,
      phoneNumberSid: record.phoneNumberSid,
      createdAt: record.dateCreated.getTime(),
      fetch,
      statusCallback,
    };
    const actor = createActor(this.deps.machine, { input });
    this.actors.set(record.sid, actor);
    actor.on('*', (e) => this.onEmitted(e));
    actor.subscribe({
      complete: () => this.actors.delete(record.sid),
      error: (err) => {
        this.deps.logger.error({ err, callSid: record.sid }, 'ussd session failed');
        this.actors.delete(record.sid);
      },
    });
    this.observe({ type: 'call.created', call: callViewOf(actor.getSnapshot().context), at: Date.now() });
    actor.start();
  }

  private onSipEvent(e: SipEvent): void {
    if (!('legId' in e)) return;
    const actor = this.actors.get(e.legId);
    if (!actor) return;
    const at = Date.now();
    let event: UssdEvent | null = null;
    switch (e.type) {
      case 'sip.confirmed':
        event = { type: 'sip.confirmed', at };
        break;
      case 'sip.answered':
        event = { type: 'sip.answered', at };
        break;
      case 'sip.failed':
        event = { type: 'sip.failed', status: e.status, at };
        break;
      case 'sip.info':
        // Other INFO packages (DTMF relay…) are not part of a USSD dialogue.
        if (isUssdContentType(e.contentType)) event = { type: 'sip.info', body: e.body, at };
        break;
      case 'sip.bye':
      case 'sip.cancel':
        event = { type: 'sip.bye', at };
        break;
      case 'sip.ended':
        event = { type: 'sip.ended', at };
        break;
    }
    if (event) actor.send(event);
  }

  private onEmitted(e: UssdEmitted): void {
    const s = e.session;
    const call = callViewOf(s);
    switch (e.type) {
      case 'ussd.answered':
        this.write(s.sid, { status: CallStatus.InProgress, startTime: new Date(e.at), sipResponseCode: 200 });
        this.observe({ type: 'call.answered', call, at: e.at });
        return;
      case 'ussd.message':
        return;
      case 'ussd.ended': {
        const duration = answeredSeconds(s.answeredAt, e.at);
        this.write(s.sid, {
          status: e.status,
          endTime: new Date(e.at),
          duration,
          ...(s.sipStatus !== null ? { sipResponseCode: s.sipStatus } : {}),
        });
        this.observe({
          type: 'call.ended',
          call,
          status: e.status,
          cause: 'local-hangup',
          sipStatus: s.sipStatus,
          duration,
          at: e.at,
        });
        const cb = s.statusCallback;
        if (cb)
          void this.deps
            .sendCallback(s.accountSid, s.sid, cb.url, cb.method, {
              CallSid: s.sid,
              AccountSid: s.accountSid,
              From: s.from,
              To: s.to,
              CallStatus: e.status,
              ApiVersion: s.apiVersion,
              Direction: s.direction,
              CallDuration: String(duration),
            })
            .catch((err) => this.deps.logger.warn({ err, callSid: s.sid }, 'ussd status callback failed'));
        return;
      }
    }
  }

  private write(sid: string, patch: Parameters<CallStore['patch']>[1]): void {
    const next = (this.writes.get(sid) ?? Promise.resolve())
      .then(() => this.deps.calls.patch(sid, patch))
      .catch((err) => this.deps.logger.error({ err, callSid: sid }, 'ussd call record not updated'));
    this.writes.set(sid, next);
    void next.then(() => {
      if (this.writes.get(sid) === next) this.writes.delete(sid);
    });
  }

  private observe(e: Parameters<CallObserver>[0]): void {
    for (const observe of this.deps.observers) {
      try {
        const pending = observe(e);
        if (pending) pending.catch((err) => this.deps.logger.warn({ err }, 'ussd live view failed'));
      } catch (err) {
        this.deps.logger.warn({ err }, 'ussd live view failed');
      }
    }
  }
}
