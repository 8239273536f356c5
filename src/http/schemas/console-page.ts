// The operator's console (plugins/admin-console.ts, docs/console.md): the shell and its assets are
// left out of the OpenAPI document like the lookup page's; the CSP report endpoint is in it.
import { Type } from '@sinclair/typebox';
import { problemExample, problemResponse, problemSchema } from './problems.js';

/** `?lang=` picks the shell's language before the cookie and Accept-Language, as on the lookup page. */
export const ConsoleQuerySchema = Type.Object({ lang: Type.Optional(Type.Unknown()) });

/** An asset's name as the build writes it (`console.<16 hex digits>.js` or `.css`). */
export const ConsoleAssetParamsSchema = Type.Object({ file: Type.String({ maxLength: 64 }) });

export const CspReportSchema = {
  tags: ['admin'],
  summary: 'Counts a browser’s report of a violation of the console’s Content-Security-Policy',
  description:
    'The `report-uri` of the console’s policy. Accepts `application/csp-report` (one report) and `application/reports+json` (the Reporting API’s array), at most 8 KiB; each violation is counted in `phone_rep_csp_violations_total` by its directive, and nothing else of it is kept or logged. No token (a browser sends it on its own); rate limited like the API.',
  consumes: ['application/csp-report', 'application/reports+json', 'application/json'],
  body: Type.Unknown(),
  response: {
    204: Type.Null(),
    400: problemResponse(
      'The report is not JSON.',
      problemSchema(['bad_request'], ''),
      problemExample('bad_request', 'A CSP report is JSON.', { field: 'body' }),
      {},
    ),
    413: problemResponse(
      'The report is over 8 KiB.',
      problemSchema(['content_too_large'], ''),
      problemExample('content_too_large', 'A CSP report is at most 8192 bytes.', { field: 'body' }),
      {},
    ),
  },
} as const;
