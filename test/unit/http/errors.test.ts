/** The HTTP error handler answers the store's typed input error with 400 InvalidParameter. */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { errorHandler } from '../../../src/http/errors.js';
import { createLogger } from '../../../src/logger.js';
import { StoreInputError } from '../../../src/store/store-errors.js';

describe('errorHandler and StoreInputError', () => {
  it('is 400 with the error catalogue shape (code 21100), not 500', async () => {
    const app = express();
    app.use((_req, res, next) => {
      res.locals.format = 'json';
      next();
    });
    app.post('/x.json', () => {
      throw new StoreInputError('friendly_name', 'nul');
    });
    app.post('/y.json', async () => {
      await Promise.resolve();
      throw new StoreInputError('body', 'lone-surrogate');
    });
    app.use(errorHandler(createLogger('silent')));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const [path, member] of [
        ['/x.json', 'friendly_name'],
        ['/y.json', 'body'],
      ] as const) {
        const r = await fetch(`${base}${path}`, { method: 'POST' });
        expect(r.status).toBe(400);
        const body = (await r.json()) as Record<string, unknown>;
        expect(body.code).toBe(21100);
        expect(body.status).toBe(400);
        expect(body.message).toContain(member);
        expect(body.more_info).toBe('/docs/errors#21100');
      }
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
