// The admin API of the operator's lists (docs/lists.md): read, add, replace, remove, import and
// export rules; and of the reporters' tokens (admin-token-routes.ts, under the same checks).
// Off unless ADMIN_TOKEN is set; served on the API port, or alone on ADMIN_PORT (admin-app.ts).
//
// - `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time (credentials.ts). A
//   missing or wrong token is a 401 with `WWW-Authenticate`, and counts against the client's
//   rate limit (a correct one does not, so an import script is not throttled); a wrong one also
//   counts against the limit on failed credentials, which holds for every client,
//   RATE_LIMIT_EXEMPT included, and past which even the right token gets a 429
//   (plugins/credential-failures.ts). A token in the query string is refused outright, since it
//   would end up in access logs and proxies' histories.
// - Answers are `Cache-Control: no-store`; no CORS (no browser page may call it).
// - Bad input is a 400 naming the field (`field`), and changes nothing.
// - Every change writes one audit line: who ("admin"), what, when, the rule as its keyed hash.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ListRule } from '../../domain/ports/operator-lists.js';
import { checkRule, spellingsToRemove, type RuleContext, type RuleProblem } from '../../domain/lists/rules.js';
import { EXPORT_COLUMNS, formatRuleLine, ListCsvError } from '../../domain/lists/list-csv.js';
import type { KeyedHasher } from '../../domain/ports/key-hasher.js';
import type { PhoneNumberParser } from '../../domain/phone-number.js';
import {
  checkImportSize,
  countCsvLines,
  formatCsvInSlices,
  ListStoreUnavailable,
  ListsTooLarge,
  readListCsvInSlices,
  type ListStore,
} from '../../infra/lists/list-store.js';
import { bearerTokenOf, secretCheck } from '../credentials.js';
import { ApiError, storeUnavailable } from '../errors.js';
import { sendProblem, toApiError } from '../plugins/problems.js';
import { ADMIN_IMPORT_MAX_BYTES, ADMIN_JSON_MAX_BYTES, adminRouteSchemas } from '../schemas/admin.js';
import type { TokenStore } from '../../infra/reports/token-store.js';
import { adminTokenRoutes } from './admin-token-routes.js';

const CSV_TYPE = 'text/csv; charset=utf-8';
const TOKEN_QUERY = /(?:^|[?&])(?:token|access_token|admin_token|bearer|auth|authorization)=/i;

export interface AdminAuditLogger {
  info(obj: object, msg: string): void;
}

export interface AdminRoutesOptions {
  lists: ListStore;
  /** The reporters' tokens (docs/reports.md); absent, their routes are not served. */
  tokens?: TokenStore;
  token: string;
  context: RuleContext;
  hashKey: KeyedHasher;
  audit?: AdminAuditLogger;
  now?: () => number;
}

/** What the admin routes need, from the app's dependencies. */
export function adminRoutesOptions(
  deps: { config: { DEFAULT_REGION: string }; parsePhoneNumber: PhoneNumberParser; hashKey: KeyedHasher },
  lists: ListStore,
  token: string,
  audit: AdminAuditLogger,
  tokens?: TokenStore,
): AdminRoutesOptions {
  return {
    lists,
    ...(tokens === undefined ? {} : { tokens }),
    token,
    context: { parsePhoneNumber: deps.parsePhoneNumber, defaultRegion: deps.config.DEFAULT_REGION },
    hashKey: deps.hashKey,
    audit,
  };
}

const ADMIN_ROUTE = { rateLimit: false, shed: false, cors: false, paramsError: 'bad_request' } as const;

const unauthorized = (detail: string): ApiError =>
  new ApiError('unauthorized', detail, undefined, {
    'WWW-Authenticate': 'Bearer realm="phone-rep admin", charset="UTF-8"',
  });

function badField(problem: RuleProblem | { field: string; reason: string }): ApiError {
  return new ApiError('bad_request', `${problem.field}: ${problem.reason}`, { field: problem.field });
}

export async function adminRoutes(app: FastifyInstance, options: AdminRoutesOptions): Promise<void> {
  const { lists, context, hashKey, audit } = options;
  const now = options.now ?? Date.now;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const tokenMatches = secretCheck(options.token);

  // The whole group: no-store, and the Bearer check before anything is read.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
    const failed = async (detail: string): Promise<never> => {
      // A failed attempt counts against the client's limit (a 429 once it is spent).
      await request.server.clientRateLimit?.(request, reply);
      throw unauthorized(detail);
    };
    request.server.credentialFailures.refuseLockedOut(request);
    if (
      TOKEN_QUERY.test(
        request.url.slice(request.url.indexOf('?') === -1 ? request.url.length : request.url.indexOf('?')),
      )
    ) {
      await failed('The admin token goes in the Authorization header (Bearer), never in the URL.');
    }
    const given = bearerTokenOf(request.headers.authorization);
    if (given === undefined) await failed('Authorization: Bearer <ADMIN_TOKEN> is required.');
    else if (!tokenMatches(given)) {
      request.server.credentialFailures.recordFailure(request);
      await failed('The admin token is not valid.');
    }
  });

  // Errors of this group: Fastify's body errors become 400s naming the body.
  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return sendProblem(reply, request.id, error);
    if (error instanceof ListStoreUnavailable)
      return sendProblem(reply, request.id, storeUnavailable('lists_unavailable', error.message));
    if (error instanceof ListsTooLarge)
      return sendProblem(reply, request.id, new ApiError('lists_too_large', error.message, { field: 'body' }));
    const code = error.code;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return sendProblem(
        reply,
        request.id,
        badField({
          field: 'body',
          reason: `the body is over its limit (${request.url.includes('/import') ? ADMIN_IMPORT_MAX_BYTES : ADMIN_JSON_MAX_BYTES} bytes)`,
        }),
      );
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return sendProblem(
        reply,
        request.id,
        badField({ field: 'body', reason: 'the body must be application/json (PUT) or text/csv (import)' }),
      );
    if (
      code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      (error as { statusCode?: number }).statusCode === 400
    ) {
      if (error.validation) {
        const first = error.validation?.[0];
        const field =
          first?.instancePath?.replace(/^\//, '') ||
          (first?.params as { additionalProperty?: string; missingProperty?: string } | undefined)
            ?.additionalProperty ||
          (first?.params as { missingProperty?: string } | undefined)?.missingProperty ||
          'body';
        return sendProblem(reply, request.id, badField({ field, reason: first?.message ?? 'not valid' }));
      }
      return sendProblem(reply, request.id, badField({ field: 'body', reason: 'the body is not valid JSON' }));
    }
    return sendProblem(reply, request.id, toApiError(error, request));
  });

  app.addContentTypeParser(
    ['text/csv', 'text/plain'],
    { parseAs: 'string', bodyLimit: ADMIN_IMPORT_MAX_BYTES },
    (_request, body, done) => done(null, body),
  );

  const auditLine = (action: string, fields: Record<string, unknown>): void => {
    audit?.info(
      { audit: 'lists', who: 'admin', action, at: new Date(now()).toISOString(), ...fields },
      `lists: ${action} by admin`,
    );
  };

  // A child of this group: its Bearer check, no-store and error handler hold there too.
  if (options.tokens !== undefined)
    await app.register(adminTokenRoutes, {
      tokens: options.tokens,
      ...(audit === undefined ? {} : { audit }),
      now,
    });

  typed.get('/admin/lists/rules', { config: ADMIN_ROUTE, schema: adminRouteSchemas.rules }, async () =>
    lists.storedRules(),
  );

  typed.put(
    '/admin/lists/rules/:rule',
    {
      config: ADMIN_ROUTE,
      bodyLimit: ADMIN_JSON_MAX_BYTES,
      schema: adminRouteSchemas.putRule,
    },
    async (request, reply) => {
      const { rule: written } = request.params;
      const { body } = request;
      const checked = checkRule(
        {
          rule: written,
          list: body.list,
          label: body.label,
          labelPublic: body.labelPublic,
          note: body.note,
          expiresAt: body.expiresAt,
        },
        context,
        { nowMs: now(), force: body.force === true },
      );
      if (!checked.ok) throw badField(checked.problem);
      const { replaced } = await lists.put(checked.value);
      auditLine(replaced ? 'replace' : 'add', { rule: hashKey(checked.value.rule), list: checked.value.list });
      return reply.code(replaced ? 200 : 201).send({ rule: checked.value, replaced });
    },
  );

  typed.delete(
    '/admin/lists/rules/:rule',
    { config: ADMIN_ROUTE, schema: adminRouteSchemas.removeRule },
    async (request, reply) => {
      const { rule: written } = request.params;
      const spellings = spellingsToRemove(written, context);
      if (!spellings.ok) throw badField(spellings.problem);
      let removed: string | undefined;
      for (const spelling of spellings.value) {
        if (await lists.remove(spelling)) {
          removed = spelling;
          break;
        }
      }
      if (removed === undefined) throw new ApiError('rule_not_found', 'There is no such rule.', { field: 'rule' });
      auditLine('remove', { rule: hashKey(removed) });
      // The 204's schema is null; Fastify sends a 204 without a body or content headers whatever the payload.
      return reply.code(204).send(null);
    },
  );

  typed.post(
    '/admin/lists/import',
    {
      config: ADMIN_ROUTE,
      bodyLimit: ADMIN_IMPORT_MAX_BYTES,
      schema: adminRouteSchemas.importRules,
    },
    async (request) => {
      if (typeof request.body !== 'string') throw badField({ field: 'body', reason: 'the body must be text/csv' });
      // Bounded by a count of its lines before any is read: what memory allows (docs/lists.md, "Size").
      checkImportSize(countCsvLines(request.body), lists.index().size());
      let rules: ListRule[];
      try {
        rules = await readListCsvInSlices(request.body, { context, nowMs: now() });
      } catch (error) {
        if (error instanceof ListCsvError)
          throw new ApiError('bad_request', `line ${error.line}: ${error.reason}`, {
            field: error.field ?? 'body',
            line: error.line,
          });
        throw error;
      }
      const result = await lists.importRules(rules);
      auditLine('import', { rules: rules.length, added: result.added, replaced: result.replaced });
      return result;
    },
  );

  typed.get(
    '/admin/lists/export',
    { config: ADMIN_ROUTE, schema: adminRouteSchemas.exportRules },
    async (_request, reply) => {
      const text = await formatCsvInSlices(
        [...lists.activeRules(now())],
        (rule) => formatRuleLine(rule, EXPORT_COLUMNS),
        EXPORT_COLUMNS.join(','),
      );
      return reply.type(CSV_TYPE).send(text);
    },
  );
}
