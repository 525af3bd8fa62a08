/** The OpenAPI generator: paths, declared members with the enforced limits, responses, auth. */
import { describe, expect, it } from 'vitest';
import { buildDocument, documentPath } from '../../../../src/http/openapi/document.js';
import type { RouteEntry } from '../../../../src/http/router.js';
import { MEMBER_MAX_LENGTH, URL_MAX_LENGTH } from '../../../../src/http/validate.js';

const entries: RouteEntry[] = [
  {
    path: '/2012-04-24/Accounts/:accountSid/Things',
    methods: ['GET', 'POST'],
    auth: true,
    accountScoped: true,
    spec: {
      tag: 'Things',
      GET: {
        summary: 'List things',
        params: [{ name: 'Status', enum: ['a', 'b'] }],
        response: { kind: 'page', schema: 'Call', key: 'things' },
      },
      POST: {
        summary: 'Create a thing',
        params: [
          { name: 'FriendlyName', required: true },
          { name: 'VoiceUrl', type: 'url' },
          { name: 'Body', required: 'handler' },
        ],
        response: { kind: 'one', schema: 'Application', status: 201 },
      },
    },
  },
  { path: '/2012-04-24/Undeclared', methods: ['GET'], auth: true, accountScoped: false },
  {
    path: '/2012-04-24/Profiles/:profileSid',
    methods: ['GET'],
    auth: false,
    accountScoped: false,
    spec: {
      tag: 'Profiles',
      jsonOnly: true,
      GET: { summary: "Get a thing's profile", response: { kind: 'json', status: 200 } },
    },
  },
];

describe('buildDocument', () => {
  const doc = buildDocument(entries, { publicUrl: 'http://127.0.0.1:1', version: 'x' }) as {
    // biome-ignore lint/suspicious/noExplicitAny: walked by member names
    paths: Record<string, any>;
    // biome-ignore lint/suspicious/noExplicitAny: walked by member names
    components: { schemas: Record<string, any> };
  };

  it('turns templates into OpenAPI paths, with .json unless the route is JSON only', () => {
    expect(documentPath('/a/:b/c', undefined)).toBe('/a/{b}/c.json');
    expect(Object.keys(doc.paths)).toEqual([
      '/2012-04-24/Accounts/{accountSid}/Things.json',
      '/2012-04-24/Profiles/{profileSid}',
    ]);
  });

  it('leaves undeclared routes out (the contract test reports them)', () => {
    expect(JSON.stringify(doc.paths)).not.toContain('Undeclared');
  });

  it('takes form limits from MEMBER_MAX_LENGTH and marks both kinds of required members', () => {
    const post = doc.paths['/2012-04-24/Accounts/{accountSid}/Things.json'].post;
    const schema = post.requestBody.content['application/x-www-form-urlencoded'].schema;
    expect(schema.properties.FriendlyName.maxLength).toBe(MEMBER_MAX_LENGTH.FriendlyName);
    expect(schema.properties.VoiceUrl).toMatchObject({ format: 'uri', maxLength: URL_MAX_LENGTH });
    expect(schema.required).toEqual(['FriendlyName', 'Body']);
    expect(post.operationId).toBe('createThing');
    expect(post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Application',
    });
    expect(post.security).toEqual([{ basicAuth: [] }]);
  });

  it('adds paging parameters and the envelope schema to paged lists', () => {
    const get = doc.paths['/2012-04-24/Accounts/{accountSid}/Things.json'].get;
    expect(get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'accountSid',
      'Status',
      'Page',
      'PageSize',
    ]);
    expect(doc.components.schemas.CallPage.properties.things.items).toEqual({
      $ref: '#/components/schemas/Call',
    });
  });

  it('marks unauthenticated operations and derives ids without articles or apostrophes', () => {
    const get = doc.paths['/2012-04-24/Profiles/{profileSid}'].get;
    expect(get.security).toEqual([]);
    expect(get.operationId).toBe('getThingsProfile');
  });
});
