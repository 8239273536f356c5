// Reports in (docs/reports.md, "Reporting"): `POST /api/report`, the same route at PhoneBlock's
// `POST /api/rate`, and PhoneBlock's setup check `GET /api/test`, each behind a reporter's token
// (`Authorization: Bearer <token>`, src/domain/ports/caller-reports.ts ReporterTokens).
//
// - Reporting is off until the operator creates a token: every request is then a 401 whose
//   `code` is `reporting_off` and whose detail says so (a 401, not a 404: the routes exist, and a
//   phone's owner learns what to ask the operator for).
// - A missing, unknown, expired or revoked token is a 401 and changes nothing; a wrong one counts
//   against the limit on failed credentials (plugins/credential-failures.ts), like the admin
//   token and the feed's password. The token is checked in preParsing, before any body is read.
// - The body is read from its raw bytes whatever its Content-Type (domain/reports/report-body.ts),
//   capped at REPORT_BODY_MAX_BYTES (413); the number by the service's parser (a withheld or
//   invalid one is the phone routes' 400 with the parser's code); the vote goes to the
//   ReportRecorder (the per-token day cap is its 429 with Retry-After; a store that cannot be
//   written is a 503).
// - The answer is 200 `{"ok": true, "replaced"}`, `Cache-Control: no-store`.
// - Nothing here logs or counts a number, a token or a comment: metrics count reports by rating
//   and refusals by reason (a closed set), and the access line carries the route pattern only.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PhoneNumberParser } from '../../domain/phone-number.js';
import {
  ReportStoreUnavailable,
  type ReporterToken,
  type ReporterTokens,
  type ReportRating,
  type ReportRecorder,
} from '../../domain/ports/caller-reports.js';
import { readReportBody, REPORT_BODY_MAX_BYTES } from '../../domain/reports/report-body.js';
import type { ReportRefusalReason } from '../../infra/metrics/service-metrics.js';
import { bearerTokenOf } from '../credentials.js';
import { ApiError, invalidNumberError, storeUnavailable } from '../errors.js';
import { sendProblem, toApiError } from '../plugins/problems.js';
import { reportRouteSchemas } from '../schemas/reports.js';

export interface ReportRoutesOptions {
  parsePhoneNumber: PhoneNumberParser;
  /** The reporters' tokens; absent, reporting is off (every request a 401 `reporting_off`). */
  tokens?: ReporterTokens | undefined;
  /** Where votes go; absent, reporting is off. */
  recorder?: ReportRecorder | undefined;
  /** The clock (epoch ms) handed to the ports: token expiry, the day cap. */
  now?: () => number;
  /** A report recorded, by its rating (the metrics' counter). */
  onReport?: (rating: ReportRating) => void;
  /** A request refused, by reason (the metrics' counter). */
  onRefusal?: (reason: ReportRefusalReason) => void;
}

export const REPORT_PATHS = ['/api/report', '/api/rate', '/api/test'] as const;

const REALM = 'Bearer realm="phone-rep reports", charset="UTF-8"';

/** Rate limited and shed like the API; no CORS: a browser page has no business sending a phone's token. */
const REPORT_ROUTE = { rateLimit: true, shed: true, cors: false, paramsError: 'bad_request' } as const;

export const REPORTING_OFF_DETAIL =
  'Reporting is off: the operator has created no reporter token yet (phone-rep token create --label LABEL).';

/** A refusal the routes count: the problem to send and the reason to count it under. */
class Refusal extends Error {
  override name = 'Refusal';
  constructor(
    readonly reason: ReportRefusalReason,
    readonly problem: ApiError,
  ) {
    super(reason);
  }
}

function unauthorized(code: 'reporting_off' | 'missing_token' | 'invalid_token', detail: string): Refusal {
  return new Refusal(code, new ApiError('unauthorized', detail, { code }, { 'WWW-Authenticate': REALM }));
}

export async function reportRoutes(app: FastifyInstance, options: ReportRoutesOptions): Promise<void> {
  const { parsePhoneNumber, tokens, recorder } = options;
  const now = options.now ?? Date.now;
  /** The token each authenticated request came with (never logged: only its id is recorded). */
  const reporters = new WeakMap<FastifyRequest, ReporterToken>();

  // The body as bytes, whatever its Content-Type says (SpamBlocker's JSON arrives labelled as a
  // form), read by report-body.ts. Only in this group: the rest of the app keeps Fastify's parsers.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: REPORT_BODY_MAX_BYTES }, (_request, body, done) =>
    done(null, body),
  );

  app.setErrorHandler(async (error: FastifyError | ApiError | Refusal, request, reply) => {
    let refusal: Refusal | undefined;
    if (error instanceof Refusal) refusal = error;
    else if (error instanceof ReportStoreUnavailable)
      refusal = new Refusal(
        'store_unavailable',
        storeUnavailable('reports_unavailable', 'The reports cannot be written now; retry later.'),
      );
    else if ((error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      refusal = new Refusal(
        'too_large',
        new ApiError('content_too_large', `The body is over ${REPORT_BODY_MAX_BYTES} bytes.`, { field: 'body' }),
      );
    else if ((error as FastifyError).code?.startsWith('FST_ERR_CTP_') === true)
      refusal = new Refusal(
        'bad_body',
        new ApiError('bad_request', 'body: the body cannot be read', { field: 'body' }),
      );
    if (refusal === undefined) {
      const apiError = toApiError(error as FastifyError, request);
      // As the app's own handler does: the error's type and code only, never its message (it may quote the body).
      if (apiError.code === 'internal')
        request.log.error({ err: { type: error.name, code: (error as FastifyError).code } }, 'unhandled error');
      return sendProblem(reply, request.id, apiError);
    }
    options.onRefusal?.(refusal.reason);
    return sendProblem(reply, request.id, refusal.problem);
  });

  /** The token check, before any body is read. */
  async function authenticate(request: FastifyRequest): Promise<void> {
    const { credentialFailures } = request.server;
    try {
      credentialFailures.refuseLockedOut(request);
    } catch (lockedOut) {
      if (lockedOut instanceof ApiError) throw new Refusal('locked_out', lockedOut);
      throw lockedOut;
    }
    const at = now();
    if (tokens === undefined || recorder === undefined || !tokens.anyInForce(at))
      throw unauthorized('reporting_off', REPORTING_OFF_DETAIL);
    const secret = bearerTokenOf(request.headers.authorization);
    // No credential is a client's first step, not a guess: only a wrong one counts.
    if (secret === undefined)
      throw unauthorized('missing_token', 'Authorization: Bearer <token> is required (a reporter token).');
    const token = await tokens.authenticate(secret, at);
    if (token === null) {
      credentialFailures.recordFailure(request);
      throw unauthorized('invalid_token', 'This token is unknown, expired or revoked.');
    }
    reporters.set(request, token);
  }

  async function report(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const token = reporters.get(request);
    if (token === undefined || recorder === undefined) throw unauthorized('reporting_off', REPORTING_OFF_DETAIL);
    const body = readReportBody(Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
    if (!body.ok) {
      if (body.tooLarge === true)
        throw new Refusal(
          'too_large',
          new ApiError('content_too_large', `The body is over ${REPORT_BODY_MAX_BYTES} bytes.`, { field: 'body' }),
        );
      throw new Refusal(
        'bad_body',
        new ApiError('bad_request', `${body.field}: ${body.reason}`, { field: body.field }),
      );
    }
    const parsed = parsePhoneNumber(body.value.phone);
    if (!parsed.ok) throw new Refusal('invalid_number', invalidNumberError(parsed.reason, { field: 'phone' }));
    const at = now();
    const outcome = await recorder.record(
      {
        e164: parsed.value.e164,
        tokenId: token.id,
        rating: body.value.rating,
        at,
        ...(body.value.comment === undefined ? {} : { comment: body.value.comment }),
      },
      at,
    );
    if (!outcome.ok)
      throw new Refusal(
        'token_day_cap',
        new ApiError(
          'too_many_requests',
          'This token sent all its reports for today (REPORT_MAX_PER_TOKEN_DAY); retry after midnight UTC.',
          { code: 'token_day_cap' },
          { 'Retry-After': String(Math.max(1, Math.ceil(outcome.retryAfterSeconds))) },
        ),
      );
    options.onReport?.(body.value.rating);
    return reply.header('cache-control', 'no-store').code(200).send({ ok: true, replaced: outcome.replaced });
  }

  // The body schema documents the request (OpenAPI); report-body.ts reads it.
  const documentedOnly = (): ((data: unknown) => boolean) => () => true;
  app.post(
    '/api/report',
    {
      config: REPORT_ROUTE,
      schema: reportRouteSchemas.report,
      validatorCompiler: documentedOnly,
      preParsing: authenticate,
    },
    report,
  );
  app.post(
    '/api/rate',
    {
      config: REPORT_ROUTE,
      schema: reportRouteSchemas.rate,
      validatorCompiler: documentedOnly,
      preParsing: authenticate,
    },
    report,
  );
  app.get(
    '/api/test',
    { config: REPORT_ROUTE, schema: reportRouteSchemas.test, preParsing: authenticate },
    async (_request, reply) => reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('ok'),
  );
}
