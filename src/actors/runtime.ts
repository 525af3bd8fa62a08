/**
 * Node-local registry of live actors by sid. One root actor per call/SMS (`createActor`),
 * never thousands of children under one parent (measured quadratic; see DEVELOPERS notes).
 */
import type { AnyActorRef } from 'xstate';

export class ActorRegistry<A extends AnyActorRef> {
  private readonly actors = new Map<string, A>();

  get(sid: string): A | undefined {
    return this.actors.get(sid);
  }

  set(sid: string, actor: A): void {
    this.actors.get(sid)?.stop();
    this.actors.set(sid, actor);
  }

  /** Stops and forgets the actor (it has ended, or its work moved to the store). */
  evict(sid: string): void {
    this.actors.get(sid)?.stop();
    this.actors.delete(sid);
  }

  get size(): number {
    return this.actors.size;
  }

  keys(): IterableIterator<string> {
    return this.actors.keys();
  }

  values(): IterableIterator<A> {
    return this.actors.values();
  }

  stopAll(): void {
    for (const a of this.actors.values()) a.stop();
    this.actors.clear();
  }
}
