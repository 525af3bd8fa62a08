/** A new call's record and the actor input made from it. */
import { newSid, SidPrefix } from '../../ids.js';
import type { CallRecord } from '../../store/call-store.js';
import type { CallInput } from './call.types.js';

export function newRecord(
  r: Pick<CallRecord, 'accountSid' | 'from' | 'to' | 'direction' | 'status' | 'apiVersion'> &
    Partial<CallRecord>,
): CallRecord {
  const now = new Date();
  return {
    sid: newSid(SidPrefix.Call),
    parentCallSid: null,
    phoneNumberSid: null,
    startTime: null,
    endTime: null,
    duration: null,
    price: null,
    priceUnit: 'USD',
    answeredBy: null,
    forwardedFrom: null,
    callerName: null,
    sipCallId: null,
    sipResponseCode: null,
    dateCreated: now,
    dateUpdated: now,
    ...r,
  };
}

export function inputOf(r: CallRecord): CallInput {
  return {
    sid: r.sid,
    accountSid: r.accountSid,
    direction: r.direction as CallInput['direction'],
    from: r.from,
    to: r.to,
    apiVersion: r.apiVersion,
    createdAt: r.dateCreated.getTime(),
    parentCallSid: r.parentCallSid,
    phoneNumberSid: r.phoneNumberSid,
    callerName: r.callerName,
    forwardedFrom: r.forwardedFrom,
  };
}

/** Whole seconds a call was up, from its answer to `end` (epoch ms); 0 when never answered. */
export function answeredSeconds(answeredAt: number | null, end: number): number {
  return answeredAt === null ? 0 : Math.max(0, Math.round((end - answeredAt) / 1000));
}
