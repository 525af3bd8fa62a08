/** The route table enforces the required members its declarations name, and refuses bad declarations. */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import type { AccountService } from '../../../src/actors/account/account-service.js';
import { errorHandler } from '../../../src/http/errors.js';
import { negotiateFormat } from '../../../src/http/format.js';
import { one } from '../../../src/http/openapi/spec.js';
import { formBody } from '../../../src/http/params.js';
import { RouteTable } from '../../../src/http/router.js';
import { createLogger } from '../../../src/logger.js';

// Public routes only: the account service is never asked.
const noAccounts = {} as AccountService;

describe('RouteTable declarations', () => {
  it('answers 400 21101 naming an absent required member before the handler runs', async () => {
    const routes = new RouteTable(noAccounts);
    let ran = 0;
    routes.resource(
      '/things',
      {
        POST: (_req, res) => {
          ran++;
          res.status(201).end();
        },
      },
      {
        auth: false,
        spec: {
          tag: 'Things',
          POST: {
            summary: 'Create a thing',
            params: [
              { name: 'Name', required: true },
              { name: 'Body', required: 'handler' },
              { name: 'Note' },
            ],
            response: one('Application', 201),
          },
        },
      },
    );
    const app = express();
    app.use(negotiateFormat);
    app.use(express.text({ type: 'application/x-www-form-urlencoded' }));
    app.use(formBody);
    app.use(routes.dispatch);
    app.use(errorHandler(createLogger('silent')));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/things.json`;
      const post = (body: string) =>
        fetch(base, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body,
        });
      const absent = await post('Note=x');
      expect(absent.status).toBe(400);
      expect(await absent.json()).toMatchObject({ code: 21101, message: 'Name is required' });
      expect(ran).toBe(0);
      // Present (even empty) goes to the handler, which knows what '' means; 'handler' members too.
      expect((await post('Name=')).status).toBe(201);
      expect((await post('Name=a')).status).toBe(201);
      expect(ran).toBe(2);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('describe() attaches a declaration to a registered path and refuses unknown paths or methods', () => {
    const routes = new RouteTable(noAccounts);
    routes.resource('/things', { GET: () => undefined }, { auth: false });
    const spec = { tag: 'Things', GET: { summary: 'List things', response: one('Application') } };
    routes.describe('/things', spec);
    expect(routes.entries[0]?.spec).toBe(spec);
    expect(() => routes.describe('/nothing', spec)).toThrow(/no route/);
    expect(() => routes.describe('/things', { ...spec, POST: spec.GET })).toThrow(/does not serve POST/);
  });
});
