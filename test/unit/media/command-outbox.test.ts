/**
 * CommandOutbox: commands of one turn leave in one IPC message (a lone command on its own),
 * commands issued while no engine is ready are held in order, and a batch whose engine left before
 * the end of the turn is held rather than lost.
 */
import { describe, expect, it } from 'vitest';
import { CommandOutbox } from '../../../src/media/command-outbox.js';
import type { EngineBatch, EngineCommand } from '../../../src/media/ipc.js';

function outbox(up = true) {
  const sent: (EngineCommand | EngineBatch)[] = [];
  const channel = { up, canSend: () => channel.up, send: (m: EngineCommand | EngineBatch) => sent.push(m) };
  return { box: new CommandOutbox(channel), sent, channel };
}
const stop = (endpointId: string): EngineCommand => ({ op: 'stop', endpointId });
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('CommandOutbox', () => {
  it('sends the commands of one turn as one batch at the end of the turn', async () => {
    const { box, sent } = outbox();
    box.submit(stop('a'));
    box.submit(stop('b'));
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([[stop('a'), stop('b')]]);
    box.submit(stop('c'));
    await nextTurn();
    expect(sent.at(-1)).toEqual(stop('c'));
  });

  it('holds commands while no engine is ready, and posts them in order once it is', async () => {
    const { box, sent, channel } = outbox(false);
    box.submit(stop('a'));
    box.submit(stop('b'));
    await nextTurn();
    expect(sent).toEqual([]);
    channel.up = true;
    box.postHeld();
    box.submit(stop('c'));
    box.flush();
    expect(sent).toEqual([[stop('a'), stop('b'), stop('c')]]);
    expect(box.takeHeld()).toEqual([]);
  });

  it('holds a batch whose engine left during the turn and hands it back', async () => {
    const { box, sent, channel } = outbox();
    box.post(stop('a'));
    channel.up = false;
    box.submit(stop('b'));
    expect(box.takeHeld()).toEqual([stop('b'), stop('a')]);
    expect(box.takeHeld()).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([]);
  });
});
