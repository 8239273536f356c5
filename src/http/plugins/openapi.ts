// OpenAPI 3.1 document generated from the route schemas (@fastify/swagger,
// https://github.com/fastify/fastify-swagger) at /openapi.json, and a browsable reference at
// /docs (@fastify/swagger-ui, https://github.com/fastify/fastify-swagger-ui), served from
// the package's own files: no CDN. Both compressed by Accept-Encoding (docs/compression.md).
import { createHash } from 'node:crypto';
import { ReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  chooseVariant,
  COMPRESSION_THRESHOLD_BYTES,
  negotiateEncoding,
  precompress,
  varyOnAcceptEncoding,
  type EncodedVariants,
} from '../encoding.js';
import { serviceRouteSchemas } from '../schemas/service.js';
import { REPORTER_TOKEN_SCHEME } from '../schemas/reports.js';

// The same relative path from src/http/plugins and dist/http/plugins.
const packageVersion = (createRequire(import.meta.url)('../../../package.json') as { version: string }).version;

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * @fastify/swagger copies a response header's schema as it is and has no place for the header's
 * own `required`; route schemas mark it `x-required` and it is moved here. And it documents a
 * body for every response: the 304s lose theirs.
 */
function liftRequiredHeaders(document: JsonObject): JsonObject {
  const paths = isObject(document.paths) ? document.paths : {};
  for (const pathItem of Object.values(paths)) {
    if (!isObject(pathItem)) continue;
    for (const operation of Object.values(pathItem)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        // A 304 has no body (RFC 9110 §15.4.5); @fastify/swagger gives every response a JSON one.
        if (status === '304' && isObject(response)) delete response.content;
        if (!isObject(response) || !isObject(response.headers)) continue;
        for (const header of Object.values(response.headers)) {
          if (!isObject(header) || !isObject(header.schema) || !('x-required' in header.schema)) continue;
          const { 'x-required': required, ...schema } = header.schema;
          header.schema = schema;
          if (required === true) header.required = true;
        }
      }
    }
  }
  return document;
}

/**
 * The document generator: at the root (it learns routes from the root's onRoute hook), so it
 * must be registered before the route groups.
 */
export const openApiPlugin = fp(
  async (app: FastifyInstance, options: { version?: string }) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'phone-reputation',
          version: options.version ?? packageVersion,
          summary: 'Whether to trust a telephone number',
          description:
            'Whether to trust a telephone number: what the number is (formats, line type, original carrier, region, NPV) and what three reputation sources say about it. Free, no authentication; 30 requests per minute per client by default. Reports from this deployment’s own phones (`/api/report`) need a reporter token. Every error is `application/problem+json` (RFC 9457) that also carries `success: false` and `error`.',
          license: { name: 'MIT', identifier: 'MIT' },
        },
        // Relative, so the document works wherever the service is deployed (any host, port or
        // scheme, behind a proxy): tools resolve it against the URL they fetched the document from.
        servers: [{ url: '/', description: 'The host that serves this document' }],
        // No operation needs credentials but the report routes and the admin API, which say so.
        security: [],
        tags: [
          { name: 'phone', description: 'Reports, scores and facts about a number' },
          { name: 'service', description: 'Health, readiness and this document' },
          {
            name: 'reports',
            description:
              'Reports from this deployment’s phones and phone systems, each with a reporter token (docs/reports.md)',
          },
          {
            name: 'admin',
            description: 'The operator’s allow and block lists (only when ADMIN_TOKEN is set; docs/lists.md)',
          },
        ],
        components: {
          securitySchemes: {
            adminToken: {
              type: 'http',
              scheme: 'bearer',
              description: 'ADMIN_TOKEN, in `Authorization: Bearer <token>`; never in the URL.',
            },
            [REPORTER_TOKEN_SCHEME]: {
              type: 'http',
              scheme: 'bearer',
              description:
                'A reporter token (`prt_…`, from `phone-rep token create` or `POST /admin/tokens`), in `Authorization: Bearer <token>`.',
            },
          },
        },
      },
      transformObject: (documentObject) =>
        'openapiObject' in documentObject
          ? liftRequiredHeaders(documentObject.openapiObject as JsonObject)
          : documentObject.swaggerObject,
    });
  },
  { name: 'openapi', fastify: '5.x' },
);

// Text files worth compressing; the swagger-ui package's images are compressed already.
const COMPRESSIBLE_FILE = /\.(?:js|css|html|json|svg|map|txt)$/;

/**
 * The docs bundle's compressed forms, made on the first request that can use them and kept for
 * the process: @fastify/swagger-ui serves its files through @fastify/static without offering
 * its `preCompressed` option, so the group's onSend hook swaps in the kept variant. Brotli at
 * quality 9, not 11: the 1.5 MB bundle takes about 0.2 s at 9 and about 3 s at 11 for 9 % fewer
 * bytes, and this runs while a person waits for the page.
 */
const DOCS_BROTLI_QUALITY = 9;
// Generated bodies (the swagger-ui initializer, /docs/json, /docs/yaml) are kept by content;
// they are fixed per process, so a handful of entries covers them.
const MAX_GENERATED_BODIES = 16;

function docsCompression() {
  const files = new Map<string, Promise<EncodedVariants>>();
  const generated = new Map<string, Promise<EncodedVariants>>();

  const fileVariants = (path: string): Promise<EncodedVariants> => {
    let variants = files.get(path);
    if (variants === undefined) {
      variants = readFile(path).then((body) => precompress(body, { brotliQuality: DOCS_BROTLI_QUALITY }));
      // A failure is not kept: the next request tries again.
      variants.catch(() => files.delete(path));
      files.set(path, variants);
    }
    return variants;
  };

  const generatedVariants = (body: Buffer): Promise<EncodedVariants> | undefined => {
    const key = createHash('sha256').update(body).digest('base64url');
    let variants = generated.get(key);
    if (variants === undefined) {
      if (generated.size >= MAX_GENERATED_BODIES) return undefined;
      variants = precompress(body, { brotliQuality: DOCS_BROTLI_QUALITY });
      generated.set(key, variants);
    }
    return variants;
  };

  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    // Ranges, 304s and errors go as they are; /openapi.json has chosen its coding already.
    if (reply.statusCode !== 200 || reply.hasHeader('content-encoding')) return payload;
    const acceptEncoding = request.headers['accept-encoding'];
    if (payload instanceof ReadStream) {
      const path = payload.path.toString();
      if (!COMPRESSIBLE_FILE.test(path)) return payload;
      varyOnAcceptEncoding(reply);
      if (negotiateEncoding(acceptEncoding) === undefined) return payload;
      let variants: EncodedVariants;
      try {
        variants = await fileVariants(path);
      } catch {
        // The file could not be read for compressing: the stream still reports its own failure.
        return payload;
      }
      const body = chooseVariant(acceptEncoding, reply, variants);
      if (!reply.hasHeader('content-encoding')) return payload;
      // The file's stream is replaced by the kept bytes: close it, and ranges no longer apply.
      payload.destroy();
      reply.removeHeader('accept-ranges');
      return body;
    }
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const identity = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
    if (identity.length < COMPRESSION_THRESHOLD_BYTES) {
      varyOnAcceptEncoding(reply);
      return payload;
    }
    const variants = negotiateEncoding(acceptEncoding) === undefined ? undefined : generatedVariants(identity);
    if (variants === undefined) {
      varyOnAcceptEncoding(reply);
      return payload;
    }
    return chooseVariant(acceptEncoding, reply, await variants);
  };
}

/**
 * `/openapi.json` and `/docs`, an encapsulated route group. Everything in it is compressed when
 * the client accepts it: the document once per process, on its first request; the docs bundle
 * per file on its first request (see docsCompression).
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  // Added before swagger-ui registers, so its routes (a child context) inherit the hook.
  app.addHook('onSend', docsCompression());
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  // The document is fixed once the routes are: serialised and compressed on first request.
  let document: Promise<EncodedVariants> | undefined;
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/openapi.json', { schema: serviceRouteSchemas.openApi }, async (request, reply) => {
      document ??= precompress(Buffer.from(JSON.stringify(app.swagger()), 'utf8'));
      const variants = await document;
      // Browser-based tools on other origins read the document too.
      reply.header('Access-Control-Allow-Origin', '*');
      return reply
        .type('application/json; charset=utf-8')
        .send(chooseVariant(request.headers['accept-encoding'], reply, variants));
    });
}
