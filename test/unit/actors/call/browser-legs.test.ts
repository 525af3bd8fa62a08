import { describe, expect, it } from 'vitest';
import { isBrowserBinding } from '../../../../src/actors/call/browser-legs.js';

describe('isBrowserBinding', () => {
  it('is true for clients registered over WS or WSS only', () => {
    expect(isBrowserBinding({ flow: { protocol: 'WSS' } })).toBe(true);
    expect(isBrowserBinding({ flow: { protocol: 'WS' } })).toBe(true);
    expect(isBrowserBinding({ flow: { protocol: 'UDP' } })).toBe(false);
    expect(isBrowserBinding({ flow: { protocol: 'TCP' } })).toBe(false);
    expect(isBrowserBinding(undefined)).toBe(false);
  });
});
