// The two phone endpoints of spec part 4: the full report and the one-call score.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { PhoneNumberParser, ParsedPhoneNumber } from '../../domain/phone-number.js';
import type { LookupResult, LookupService } from '../../domain/lookup/types.js';
import { buildReport, buildScoreResult, failureReasons, isAllSourcesFailed } from '../../domain/report-builder.js';
import { ApiError } from '../errors.js';
import { envelope, NumberParamsSchema, ProblemSchema, ReportSchema, ScoreSchema } from '../schemas.js';
import type { RateLimitHook } from '../plugins/rate-limit.js';

export interface PhoneRoutesOptions {
  parsePhoneNumber: PhoneNumberParser;
  lookupService: LookupService;
  rateLimit: RateLimitHook;
}

const errorResponses = {
  400: ProblemSchema,
  404: ProblemSchema,
  429: ProblemSchema,
  502: ProblemSchema,
  503: ProblemSchema,
};

export async function registerPhoneRoutes(app: FastifyInstance, options: PhoneRoutesOptions): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const { parsePhoneNumber, lookupService } = options;

  function parseOrThrow(params: Static<typeof NumberParamsSchema>): ParsedPhoneNumber {
    const parsed = parsePhoneNumber(params.number);
    if (!parsed.ok) throw new ApiError('invalid_number', parsed.reason);
    return parsed.value;
  }

  // A client that disconnects does not cancel the lookup: its fetches are shared with other
  // callers and their results are cached, so finishing them is never wasted.
  async function lookupOrThrow(number: ParsedPhoneNumber): Promise<LookupResult> {
    const result = await lookupService.lookup(number);
    if (isAllSourcesFailed(result)) {
      throw new ApiError('all_sources_failed', 'No upstream data source could be read; see `sources` for each outcome.', {
        sources: failureReasons(result),
      });
    }
    return result;
  }

  typed.get(
    '/api/phone/:number',
    {
      onRequest: options.rateLimit,
      schema: {
        tags: ['phone'],
        summary: 'Full report for a number',
        params: NumberParamsSchema,
        response: { 200: envelope(ReportSchema), ...errorResponses },
      },
    },
    async (request) => {
      const number = parseOrThrow(request.params);
      const built = buildReport(number, await lookupOrThrow(number));
      return { success: true as const, data: built.report, meta: built.meta };
    },
  );

  typed.get(
    '/api/phone/:number/score',
    {
      onRequest: options.rateLimit,
      schema: {
        tags: ['phone'],
        summary: 'Score and risk level for a number',
        params: NumberParamsSchema,
        response: { 200: envelope(ScoreSchema), ...errorResponses },
      },
    },
    async (request) => {
      const number = parseOrThrow(request.params);
      const built = buildScoreResult(number, await lookupOrThrow(number));
      return { success: true as const, data: built.score, meta: built.meta };
    },
  );
}
