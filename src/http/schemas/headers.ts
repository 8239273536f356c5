// Headers, as carried by the answers (see app.ts, plugins/rate-limit.ts, plugins/overload.ts),
// for every route group.

// `x-required` becomes the header's `required` in the published document (plugins/openapi.ts).
export const RequestIdHeader = {
  type: 'string',
  pattern: '^[A-Za-z0-9._:-]{1,64}$',
  description:
    "Id of this request, also in error bodies as `requestId`: the caller's own X-Request-Id when it is 1–64 characters of A–Z a–z 0–9 . _ : -, else a fresh UUID.",
  'x-required': true,
};
export const RateLimitHeader = {
  type: 'string',
  pattern: '^"default";r=[0-9]+;t=[0-9]+$',
  description:
    'Requests left (r) in the current window and seconds until it resets (t), as in draft-ietf-httpapi-ratelimit-headers. Absent when rate limiting is off (RATE_LIMIT_MAX=0).',
};
export const RateLimitPolicyHeader = {
  type: 'string',
  pattern: '^"default";q=[0-9]+;w=[0-9]+$',
  description: 'The quota (q requests) per window of w seconds. Absent when rate limiting is off.',
};
export const RetryAfterHeader = {
  type: 'string',
  pattern: '^[1-9][0-9]*$',
  description: 'Seconds to wait before trying again.',
};
export const AllowHeader = {
  type: 'string',
  const: 'GET, HEAD, OPTIONS',
  description: 'The methods this path answers.',
  'x-required': true,
};

export const ContentEncodingHeader = {
  type: 'string',
  enum: ['br', 'gzip'],
  description:
    'The coding of the body, chosen from Accept-Encoding (brotli preferred at equal q): bodies of 1024 bytes or more. Absent when the body is sent as it is.',
};
export const VaryAcceptEncodingHeader = {
  type: 'string',
  pattern: '(?:^|,\\s*)Accept-Encoding(?:\\s*,|$)',
  description: 'Names Accept-Encoding: caches must keep one answer per coding.',
  'x-required': true,
};

export const rateLimited = { RateLimit: RateLimitHeader, 'RateLimit-Policy': RateLimitPolicyHeader };

export const PreferenceAppliedHeader = {
  type: 'string',
  pattern: '^wait=[0-9]+$',
  description:
    'Sent when the request carried `Prefer: wait=<seconds>`: the wait applied, in seconds (clamped to LOOKUP_TIMEOUT_MS).',
};
export const waited = { 'Preference-Applied': PreferenceAppliedHeader };
export const ReputationScoreHeader = {
  type: 'string',
  pattern: '^(?:[1-9]|none)$',
  description:
    'The 1–9 score of `/score`, or `none` when there is none (nothing known, a withheld caller, an invalid number).',
  'x-required': true,
};
export const ReputationRiskHeader = {
  type: 'string',
  enum: ['trustworthy', 'neutral', 'suspicious', 'unknown'],
  description: 'The risk level of `/score` (`unknown` for a withheld caller or an invalid number).',
  'x-required': true,
};
export const reputation = { 'X-Reputation-Score': ReputationScoreHeader, 'X-Reputation-Risk': ReputationRiskHeader };
/** On a text answer asked with `?at=`: the instant it was made for (docs/legal-hours.md "?at"). */
export const AnswerAtHeader = {
  type: 'string',
  format: 'date-time',
  description:
    'With `?at=`: the instant the answer was made for (ISO 8601, UTC), the one given, or the time of the request when the given one was malformed and ignored.',
};

export const OperatorListHeader = {
  type: 'string',
  enum: ['allow', 'block'],
  description:
    "When one of the operator's list rules decided the answer (docs/lists.md): which list. No source was asked, so `X-Reputation-Score` is `none`.",
};

export const CallerReportsHeader = {
  type: 'string',
  enum: ['spam'],
  description:
    "When the deployment's own reporters decided the answer (the reports' verdict `spam`, docs/reports.md): no source was asked, so `X-Reputation-Score` is `none`.",
};

// HTTP caching and compression of API answers (docs/hot-path.md).
export const NoStoreHeader = {
  type: 'string',
  const: 'no-store',
  description: 'Problems are never cached.',
  'x-required': true,
};
export const LiveNoStoreHeader = {
  type: 'string',
  const: 'no-store',
  description: 'A liveness answer is about this moment: never cached.',
  'x-required': true,
};
export const ApiCacheControlHeader = {
  type: 'string',
  pattern: '^(?:no-store|public, max-age=[0-9]+)$',
  description:
    '`public, max-age=N` when all three sources are fresh answers, N being the seconds until the first of them stops being fresh; `no-store` when any source is stale, failed, skipped or pending.',
  'x-required': true,
};
export const InfoCacheControlHeader = {
  type: 'string',
  const: 'public, max-age=86400',
  description: 'The facts depend on the numbering data only, which changes with a data update.',
  'x-required': true,
};
export const EtagHeader = {
  type: 'string',
  pattern: '^W/"[A-Za-z0-9_-]+"$',
  description:
    'Weak validator of the answer (the same for every content coding); send it back in If-None-Match to get 304 while it holds. Sent on answers held by the front cache and on `/info`.',
};
export const VaryHeader = {
  type: 'string',
  const: 'Accept-Encoding, Origin',
  description:
    'The body depends on the request’s Accept-Encoding, and the CORS headers on whether it carried Origin (they are sent only then).',
  'x-required': true,
};
export const cachedApi = (cacheControl: object) => ({
  'Cache-Control': cacheControl,
  ETag: EtagHeader,
  Vary: VaryHeader,
  'Content-Encoding': ContentEncodingHeader,
});
