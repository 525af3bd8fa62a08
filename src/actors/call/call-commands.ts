/**
 * REST commands on a live call (redirect, cancel, complete, mute, move, end callback), wherever the
 * call runs: applied to the actor when this node owns the call, else sent to the owner (the call's
 * claim names it) over NodeRpc and answered with what the owner saw. The owner's actor stays the one
 * place the call changes, so its callbacks keep one increasing SequenceNumber.
 */
import type { CallStatus } from '../../store/call-store.js';
import { type NodeRpc, NodeRpcFailed, NodeRpcTimeout } from '../../store/node-rpc.js';
import type { HttpMethod } from '../../webhooks/index.js';
import type { MarkupTarget } from './call.types.js';
import type { CallRuntime } from './call-runtime.js';

/** What a REST modification asks of a live call. */
export interface CallCommand {
  readonly sid: string;
  readonly status?: 'canceled' | 'completed' | undefined;
  readonly target?: MarkupTarget | undefined;
  /** MoveConnectedCallLeg: the bridged leg follows the redirect. */
  readonly move?: boolean | undefined;
  readonly mute?: boolean | undefined;
  readonly endCallback?: { readonly url: string; readonly method: HttpMethod } | undefined;
}

/** The live call's fields after a command, as its owner saw them (times in epoch ms: JSON-safe). */
export interface CommandFields {
  readonly status: CallStatus;
  readonly startTime: number | null;
  readonly sipResponseCode: number | null;
  readonly endTime?: number;
  readonly duration?: number;
}

export interface CommandView {
  readonly room: string | null;
  /** The conference the call is a participant of, and whether it is held there. */
  readonly conferenceSid?: string | null;
  readonly hold?: boolean;
  readonly muted: boolean;
  readonly startConferenceOnEnter: boolean;
  readonly endConferenceOnEnter: boolean;
}

export type CommandAnswer =
  | { readonly outcome: 'done'; readonly fields: CommandFields | null; readonly view: CommandView | null }
  /** The call is no longer live anywhere (it ended meanwhile). */
  | { readonly outcome: 'not-live' }
  /** A redirect before the call was answered. */
  | { readonly outcome: 'not-answered' }
  /** The owner did not answer (it died: recovery will end the call; or it is overloaded). */
  | { readonly outcome: 'owner-unreachable' };

interface CommandRequest {
  readonly kind: 'call.command';
  readonly command: CallCommand;
}

const isCommandRequest = (r: unknown): r is CommandRequest =>
  typeof r === 'object' &&
  r !== null &&
  (r as { kind?: unknown }).kind === 'call.command' &&
  typeof (r as { command?: { sid?: unknown } }).command?.sid === 'string';

export interface CallCommandsDeps {
  readonly runtime: CallRuntime;
  readonly owners: { ownerOf(sid: string): Promise<{ node: string; current: boolean } | null> };
  readonly rpc: NodeRpc;
  readonly self: string;
  /** How long a forwarded command waits for the owner. */
  readonly timeoutMs: number;
}

export class CallCommands {
  constructor(private readonly deps: CallCommandsDeps) {}

  /** Serves the commands other nodes forward to this one. */
  serve(): Promise<void> {
    return this.deps.rpc.serve(async (request) => {
      if (!isCommandRequest(request)) throw new Error('unknown request');
      return this.applyHere(request.command);
    });
  }

  async run(command: CallCommand): Promise<CommandAnswer> {
    if (this.deps.runtime.actorOf(command.sid)) return this.applyHere(command);
    const owner = await this.deps.owners.ownerOf(command.sid);
    if (!owner || owner.node === this.deps.self) return { outcome: 'not-live' };
    if (!owner.current) return { outcome: 'owner-unreachable' };
    try {
      const request: CommandRequest = { kind: 'call.command', command };
      return (await this.deps.rpc.call(owner.node, request, this.deps.timeoutMs)) as CommandAnswer;
    } catch (e) {
      if (e instanceof NodeRpcTimeout || e instanceof NodeRpcFailed) return { outcome: 'owner-unreachable' };
      throw e;
    }
  }

  /** Applies a command to the actor of this node, in the order REST documents. */
  private applyHere(c: CallCommand): CommandAnswer {
    const runtime = this.deps.runtime;
    if (!runtime.actorOf(c.sid)) return { outcome: 'not-live' };
    if (c.endCallback) runtime.setEndCallback(c.sid, c.endCallback.url, c.endCallback.method);
    if (c.mute !== undefined) runtime.setMuted(c.sid, c.mute);
    if (c.target) {
      const ok = c.move ? runtime.moveConnected(c.sid, c.target) : runtime.redirect(c.sid, c.target);
      if (!ok) return { outcome: 'not-answered' };
    }
    // Status=canceled on an answered call has no effect (spec): the call is returned as it is.
    if (c.status) runtime.modifyStatus(c.sid, c.status);
    // Read at once: an actor that has just ended leaves the registry right after.
    const f = runtime.liveFields(c.sid);
    const fields: CommandFields | null = f && {
      status: f.status,
      startTime: f.startTime?.getTime() ?? null,
      sipResponseCode: f.sipResponseCode,
      ...(f.endTime ? { endTime: f.endTime.getTime() } : {}),
      ...(f.duration !== undefined && f.duration !== null ? { duration: f.duration } : {}),
    };
    return { outcome: 'done', fields, view: runtime.liveView(c.sid) };
  }
}
