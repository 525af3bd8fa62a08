/** The API server's node:http classes: what they make inherits the app's Express request and response. */
import { once } from 'node:events';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { expressClasses } from '../../../src/http/app.js';

describe('expressClasses', () => {
  it('makes plain node:http objects until adopted, then objects with the app’s Express prototypes', async () => {
    const classes = expressClasses();
    const app = express();
    app.set('query parser', 'simple');
    const seen: Array<{ express: boolean; get: unknown; query: unknown; node: boolean }> = [];
    const server = createServer(
      { IncomingMessage: classes.IncomingMessage, ServerResponse: classes.ServerResponse },
      (req, res) => {
        seen.push({
          express: Object.prototype.isPrototypeOf.call(app.request, req),
          get: (req as Partial<express.Request>).get?.('x-probe'),
          query: (req as Partial<express.Request>).query,
          node: req instanceof IncomingMessage && res instanceof ServerResponse,
        });
        res.end();
      },
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/p?a=1`;
    try {
      await (await fetch(url, { headers: { 'x-probe': 'one' } })).text();
      classes.adopt(app);
      await (await fetch(url, { headers: { 'x-probe': 'two' } })).text();
    } finally {
      server.close();
      server.closeAllConnections();
    }
    expect(seen).toEqual([
      { express: false, get: undefined, query: undefined, node: true },
      { express: true, get: 'two', query: { a: '1' }, node: true },
    ]);
  });
});
