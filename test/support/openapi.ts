/**
 * The served OpenAPI document as a contract: loads `/openapi.json` into ajv (draft 2020-12) and
 * asserts real responses against the schema the document gives for `method path → status`.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { jsonPointer } from '../../src/json-members.js';
import type { TestServer } from './server.js';

export interface DocumentedApi {
  // biome-ignore lint/suspicious/noExplicitAny: the document is walked by member names
  readonly doc: any;
  readonly ajv: Ajv2020;
  /** The validator of the JSON body the document promises for `method path → status`. */
  validator(method: string, path: string, status: number): ValidateFunction;
  /** Asserts a real response has `status` and matches the documented schema for it. */
  expectDocumented(
    res: { status: number; json: unknown; text: string },
    method: string,
    path: string,
    status: number,
  ): void;
}

export async function documentedApi(ts: TestServer): Promise<DocumentedApi> {
  const res = await ts.request('GET', '/openapi.json', { auth: null });
  expect(res.status).toBe(200);
  const doc = res.json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('uri', (s: string) => URL.canParse(s));
  ajv.addSchema(doc, 'openapi');
  const validator = (method: string, path: string, status: number): ValidateFunction => {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op, `${method} ${path}`).toBeDefined();
    // Error statuses share the `default` response (the error body).
    const key = op.responses[String(status)] ? String(status) : status >= 400 ? 'default' : String(status);
    expect(op.responses[key], `${method} ${path} ${status}`).toBeDefined();
    const at = [
      'paths',
      path,
      method.toLowerCase(),
      'responses',
      key,
      'content',
      'application/json',
      'schema',
    ];
    const ref = `openapi#${jsonPointer(at)}`;
    const validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`no schema at ${ref}`);
    return validate;
  };
  return {
    doc,
    ajv,
    validator,
    expectDocumented(res, method, path, status) {
      expect(res.status, res.text).toBe(status);
      const validate = validator(method, path, status);
      const ok = validate(res.json);
      expect(ok ? [] : validate.errors, `${method} ${path}: ${res.text.slice(0, 400)}`).toEqual([]);
    },
  };
}
