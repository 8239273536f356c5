// The admin API of the reporters' tokens (docs/reports.md, "Tokens"; docs/api.md): create one
// (its secret answered once), list them, revoke one. Registered inside the admin group
// (admin-routes.ts), so its Bearer check, no-store and error handler hold here too.
// Every change writes one audit line: who ("admin"), what, when, the token's id; never its
// secret, its hash or its label (often a person's name).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { checkNewToken, isTokenId } from '../../domain/reports/tokens.js';
import { ReportStoreUnavailable } from '../../domain/ports/caller-reports.js';
import type { TokenStore } from '../../infra/reports/token-store.js';
import { ApiError, storeUnavailable } from '../errors.js';
import { ADMIN_JSON_MAX_BYTES, adminTokenRouteSchemas } from '../schemas/admin.js';
import type { AdminAuditLogger } from './admin-routes.js';

export interface AdminTokenRoutesOptions {
  tokens: TokenStore;
  audit?: AdminAuditLogger;
  now?: () => number;
}

const ADMIN_ROUTE = { rateLimit: false, shed: false, cors: false, paramsError: 'bad_request' } as const;

/** The store's failure as the 503 of this group; anything else goes on to the group's handler. */
async function orUnavailable<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ReportStoreUnavailable) throw storeUnavailable('tokens_unavailable', error.message);
    throw error;
  }
}

export async function adminTokenRoutes(app: FastifyInstance, options: AdminTokenRoutesOptions): Promise<void> {
  const { tokens, audit } = options;
  const now = options.now ?? Date.now;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();

  const auditLine = (action: string, id: string): void => {
    audit?.info(
      { audit: 'tokens', who: 'admin', action, token: id, at: new Date(now()).toISOString() },
      `tokens: ${action} by admin`,
    );
  };

  typed.get('/admin/tokens', { config: ADMIN_ROUTE, schema: adminTokenRouteSchemas.listTokens }, async () =>
    tokens.list(),
  );

  typed.post(
    '/admin/tokens',
    { config: ADMIN_ROUTE, bodyLimit: ADMIN_JSON_MAX_BYTES, schema: adminTokenRouteSchemas.createToken },
    async (request, reply) => {
      const at = now();
      const checked = checkNewToken(request.body, at);
      if (!checked.ok)
        throw new ApiError('bad_request', `${checked.problem.field}: ${checked.problem.reason}`, {
          field: checked.problem.field,
        });
      const { secret, token } = await orUnavailable(() => tokens.create(checked.value, at));
      auditLine('create', token.id);
      return reply.code(201).send({ ...token, token: secret });
    },
  );

  typed.delete(
    '/admin/tokens/:id',
    { config: ADMIN_ROUTE, schema: adminTokenRouteSchemas.revokeToken },
    async (request, reply) => {
      const { id } = request.params;
      if (!isTokenId(id))
        throw new ApiError('bad_request', 'id: a token id is tok_ and 10 lowercase hex digits', { field: 'id' });
      if (!(await orUnavailable(() => tokens.revoke(id, now()))))
        throw new ApiError('token_not_found', 'There is no such token.', { field: 'id' });
      auditLine('revoke', id);
      return reply.code(204).send(null);
    },
  );
}
