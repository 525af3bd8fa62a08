/** The error reference data, the /docs/errors page and docs/errors.md name the same codes. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NOTIFICATION_CODES, restErrors } from '../../src/error-reference.js';
import { ErrorCatalog, moreInfoUrl } from '../../src/errors.js';
import { errorsPage } from '../../src/http/openapi/reference.js';

const markdown = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

describe('error reference', () => {
  it('has one anchored row per REST and Notification code on /docs/errors', () => {
    const page = errorsPage();
    const codes = [...restErrors().map((e) => e.code), ...NOTIFICATION_CODES.map((n) => n.code)];
    expect(restErrors()).toHaveLength(Object.keys(ErrorCatalog).length);
    for (const code of codes) expect(page, String(code)).toContain(`<tr id="${code}">`);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('documents in docs/errors.md every code the page shows', () => {
    const missing = [...restErrors().map((e) => e.code), ...NOTIFICATION_CODES.map((n) => n.code)].filter(
      (code) => !markdown.includes(String(code)),
    );
    expect(missing).toEqual([]);
  });

  it('builds more_info links under the public URL, one anchor per code', () => {
    expect(moreInfoUrl('https://sb.example.test/', 20404)).toBe('https://sb.example.test/docs/errors#20404');
    expect(moreInfoUrl('', 21100)).toBe('/docs/errors#21100');
  });

  it('escapes the texts it renders', () => {
    expect(errorsPage()).toContain('<code>client:&#60;login&#62;</code>');
  });
});
