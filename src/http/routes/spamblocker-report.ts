// SpamBlocker's "Report API" config for this deployment (docs/integrations/spamblocker.md,
// "Reporting"), in the app's own JSON: what its import box on the Report API screen decodes into a
// `ReportApi` (aj3423/SpamBlocker db/ApiTable.kt; kotlinx.serialization, `type` as the actions'
// class discriminator, unknown keys ignored). Served at /integrations/spamblocker/report.json
// (spamblocker-routes.ts) without a token, and printed with one by `phone-rep token create
// --spamblocker`.
//
// Read in the app's source (ui/setting/api/ApiPresets.kt, the PhoneBlock report preset, and
// service/bot/Actions.kt, Actions1.kt):
// - ParseIncomingNumber (the class InterceptCall) splits the caller into `{cc}` and `{domestic}`;
//   `forwardType` 1 (Original) keeps the original caller of a forwarded call `111&222`.
// - CategoryConfig maps the tag the user picked (`{fraud}`…, `{other}` for the reports the app
//   sends by itself) to the value `{category}` takes; its map keys keep the braces.
// - HttpDownload (the class HttpRequest) with method 1 (POST): the URL and body have their tags
//   replaced by plain String.replace, `{comment}` included, unescaped; the header is split at
//   its colon; no Content-Type is set (Android then labels the body a form).
import { SPAMBLOCKER_RATINGS } from '../../domain/reports/ratings.js';
import { PUBLIC_URL_WARNINGS, type PublicUrlWarning } from '../public-url.js';

export const SPAMBLOCKER_REPORT_PATH = '/integrations/spamblocker/report.json';

/** In the served config's header, where the token goes: a request with it is refused (401) until it is replaced. */
export const SPAMBLOCKER_TOKEN_PLACEHOLDER = 'PASTE_YOUR_TOKEN_HERE';

/** CategoryConfig's map: each of SpamBlocker's six tags, braces included, to the rating it is recorded as. */
export const SPAMBLOCKER_CATEGORY_MAP: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(SPAMBLOCKER_RATINGS).map(([tag, rating]) => [`{${tag}}`, rating]),
);

/**
 * The POST body template. `phone` and `rating` come before `comment`: a comment that breaks the
 * JSON (a `"` or a newline, pasted in unescaped) leaves them readable (domain/reports/report-body.ts).
 */
export const SPAMBLOCKER_REPORT_BODY =
  '{\n  "phone": "+{cc}{domestic}",\n  "rating": "{category}",\n  "comment": "{comment}"\n}';

/** HttpDownload's `method` for POST (Actions1.kt: HTTP_GET = 0, HTTP_POST = 1). */
const HTTP_POST = 1;
/** ParseIncomingNumber's `forwardType` that keeps a forwarded call's original caller (Actions.kt, ForwardType.Original). */
const FORWARD_TYPE_ORIGINAL = 1;

/** The Report API as SpamBlocker's `ReportApi` serialises, posting to `${base}/api/report` with `token` (else a placeholder). */
export function spamBlockerReportApi(
  base: string,
  token?: string,
  warning?: PublicUrlWarning,
): Record<string, unknown> {
  const notes = [
    ...(warning === undefined ? [] : [PUBLIC_URL_WARNINGS[warning].short]),
    ...(token === undefined ? ['put your token in the header'] : []),
  ];
  return {
    desc: `phone-reputation reports (${new URL(base).host}${notes.map((note) => `; ${note}`).join('')})`,
    enabled: true,
    actions: [
      { type: 'ParseIncomingNumber', numberFilter: '.*', forwardType: FORWARD_TYPE_ORIGINAL },
      { type: 'CategoryConfig', map: { ...SPAMBLOCKER_CATEGORY_MAP } },
      {
        type: 'HttpDownload',
        method: HTTP_POST,
        url: `${base}/api/report`,
        header: `Authorization: Bearer ${token ?? SPAMBLOCKER_TOKEN_PLACEHOLDER}`,
        body: SPAMBLOCKER_REPORT_BODY,
      },
    ],
  };
}
