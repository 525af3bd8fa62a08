/**
 * Recovery of calls whose node died (docs/calls.md): this node renews its claims on its live calls
 * every third of the lease and claims the live calls whose claim expired. A claimed call is restored
 * from its Redis snapshot into a working actor (call.machine.ts `call.restored`): a queued REST call
 * is admitted and dialled here; a call whose SIP transaction or media lived on the dead node ends
 * with the right record and callbacks (BYE in the persisted dialog when it was answered). A call
 * without a snapshot is closed from its record alone. At start, this node's own old claims (a
 * restart with a fixed INSTANCE_ID) are released first: nothing is live yet.
 */
import type { Logger } from '../../logger.js';
import type { PersistedDialog, SipPort } from '../../sip/port.js';
import {
  type CallClaim,
  type CallRecord,
  CallStatus,
  type CallStore,
  type OrphanCall,
  type StoredStatusCallback,
} from '../../store/call-store.js';
import type { IncomingNumber } from '../../store/number-store.js';
import type { SnapshotStore } from '../../store/snapshot-store.js';
import type { SendCallback } from './call-observers.js';
import { restorable } from './call-snapshots.js';
import { answeredSeconds } from './records.js';
import { numberStatusParams, ProgressEvent, progressParams } from './status-callbacks.js';

export interface CallRecoveryDeps {
  readonly calls: Pick<CallStore, 'releaseClaims' | 'renewClaims' | 'claimOrphans' | 'update'>;
  readonly snapshots: SnapshotStore;
  readonly sip: Pick<SipPort, 'endDialog'>;
  readonly claim: CallClaim;
  /** Restores a call actor from its snapshot; false when it is live here or not restorable. */
  readonly restore: (persisted: unknown) => boolean;
  readonly isLive: (sid: string) => boolean;
  readonly sendCallback: SendCallback;
  /** A number of the account (its StatusCallback). */
  readonly numberOf?: (accountSid: string, sid: string) => Promise<IncomingNumber | null>;
  readonly instanceId: string;
  readonly logger: Logger;
}

const BATCH = 100;

export class CallRecovery {
  private sweep: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: CallRecoveryDeps) {}

  async start(): Promise<void> {
    const { calls, claim } = this.deps;
    await calls.releaseClaims(claim.node);
    await this.recoverOrphans();
    this.sweep = setInterval(
      () => {
        void calls
          .renewClaims(claim.node, claim.leaseMs)
          .then(() => this.recoverOrphans())
          .catch((err) => this.deps.logger.warn({ err }, 'call claims not renewed'));
      },
      Math.max(1000, Math.floor(claim.leaseMs / 3)),
    );
    this.sweep.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.sweep) clearInterval(this.sweep);
  }

  private async recoverOrphans(): Promise<void> {
    for (;;) {
      const orphans = await this.deps.calls.claimOrphans(
        this.deps.claim.node,
        this.deps.claim.leaseMs,
        BATCH,
      );
      for (const orphan of orphans) {
        const sid = orphan.record.sid;
        // Live here after all (a renewal came late): the claim is ours again, nothing to do.
        if (this.deps.isLive(sid)) continue;
        await this.recover(orphan).catch((err) =>
          this.deps.logger.error({ err, callSid: sid }, 'orphaned call not recovered'),
        );
      }
      if (orphans.length < BATCH || this.stopped) return;
    }
  }

  private async recover(orphan: OrphanCall): Promise<void> {
    const { record } = orphan;
    const snapshot = restorable(
      await this.deps.snapshots.load<{ context?: { sip?: { dialog?: PersistedDialog | null } } }>(
        'call',
        record.sid,
      ),
    );
    const restored = snapshot !== null && this.deps.restore(snapshot);
    this.deps.logger.warn(
      { callSid: record.sid, accountSid: record.accountSid, was: record.status, restored },
      'call of a node that died: taken over',
    );
    if (!restored) await this.close(orphan, snapshot?.context?.sip?.dialog ?? null);
  }

  /** No snapshot to restore: the record alone says how the call ends. */
  private async close({ record, statusCallback }: OrphanCall, dialog: PersistedDialog | null): Promise<void> {
    const answered = record.status === CallStatus.InProgress;
    if (answered && dialog) this.deps.sip.endDialog(dialog);
    const now = new Date();
    const duration = answeredSeconds(answered ? (record.startTime?.getTime() ?? null) : null, now.getTime());
    const status = answered ? CallStatus.Completed : CallStatus.Failed;
    const closed = (await this.deps.calls.update(record.sid, { status, endTime: now, duration })) ?? record;
    await this.deps.snapshots.delete('call', record.sid);
    await this.callbacks(closed, record.status, statusCallback, now.getTime(), duration);
  }

  /**
   * The callbacks a call closed from its record still owes: the REST StatusCallback's `completed`
   * (its SequenceNumber follows the events the call's last status implies were sent) and, for an
   * answered call to a number, the number's `completed`.
   */
  private async callbacks(
    call: CallRecord,
    was: CallStatus,
    cb: StoredStatusCallback | null,
    at: number,
    duration: number,
  ): Promise<void> {
    const send = this.deps.sendCallback;
    if (cb?.events.includes(ProgressEvent.Completed)) {
      const reached: readonly string[] =
        was === CallStatus.Queued
          ? [ProgressEvent.Initiated]
          : was === CallStatus.Ringing
            ? [ProgressEvent.Initiated, ProgressEvent.Ringing]
            : [ProgressEvent.Initiated, ProgressEvent.Ringing, ProgressEvent.Answered];
      const sequence = reached.filter((e) => cb.events.includes(e)).length;
      await send(call, cb.url, cb.method, progressParams(call, call.status, sequence, at, duration));
    }
    if (call.status === CallStatus.Completed && call.phoneNumberSid && this.deps.numberOf) {
      const n = await this.deps.numberOf(call.accountSid, call.phoneNumberSid);
      if (n?.statusCallback)
        await send(
          call,
          n.statusCallback,
          n.statusCallbackMethod,
          numberStatusParams(call, 'completed', this.deps.instanceId),
        );
    }
  }
}
