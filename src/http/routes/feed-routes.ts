// The blocklist feed over HTTP (docs/integrations/blocklist-feed.md), registered only when
// FEED_PASSWORD is set: a read-only CardDAV address book (RFC 6352, the subset Fritz!Boxes,
// DAVx5, Thunderbird and vdirsyncer use), the same cards as one .vcf file, the CSV SpamBlocker
// imports, and the SpamBlocker workflow that downloads that CSV.
//
// Every request is counted by the rate limit before its credentials are checked, so failed
// attempts count and, past the limit, even the right password gets a 429: the limit gives a
// guesser no answer. A wrong password also counts against the limit on failed credentials
// (plugins/credential-failures.ts), which holds for every client, RATE_LIMIT_EXEMPT included.
// Credentials are checked in preParsing, before any body is read. Nothing here logs a number:
// the access line carries the route pattern only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import {
  type BlocklistFeed,
  type FeedCardFile,
  type FeedFile,
  type FeedSnapshot,
} from '../../infra/blocklist/blocklist-feed.js';
import type { Steps } from '../../domain/steps.js';
import { createSlicer, letLoopThrough, type Slicer } from '../../infra/runtime/event-loop-slices.js';
import { basicCheck, basicCredentialsOf } from '../credentials.js';
import { ApiError } from '../errors.js';
import {
  davMissing,
  davRequestSteps,
  davResponse,
  escapeXml,
  multistatus,
  needPrivilegesError,
  parseDavRequest,
  type DavProperties,
  type DavProperty,
  type DavRequest,
} from '../dav/dav-xml.js';
import { matchesEtag } from '../conditional-requests.js';
import { publicBase, PUBLIC_URL_WARNINGS } from '../public-url.js';
import { CardParamsSchema, HIDDEN } from '../schemas/feed.js';
import { spamBlockerWorkflow } from './spamblocker-routes.js';

export interface FeedRoutesOptions {
  feed: BlocklistFeed;
  user: string;
  password: string;
  /** PUBLIC_URL, for the workflow's download URL. */
  publicUrl: string | undefined;
  /**
   * Told of each fetch of the feed's content that was answered (the address book's cards, the
   * .vcf or .csv file; a 304 too): the client's User-Agent and the entries the feed holds (the
   * console's feed clients, docs/console.md). Called after the answer is sent.
   */
  onFetch?: (userAgent: string | undefined, entries: number) => void;
}

export const CARDDAV_HOME = '/carddav/';
export const ADDRESS_BOOK = '/carddav/blocklist/';
const DISPLAY_NAME = 'phone-reputation blocklist';
const REALM = 'blocklist';
const XML_TYPE = 'application/xml; charset=utf-8';
const VCARD_TYPE = 'text/vcard; charset=utf-8';
/** Writing methods: answered 403 with a DAV error body. */
export const WRITE_METHODS = [
  'PUT',
  'DELETE',
  'POST',
  'PATCH',
  'PROPPATCH',
  'MKCOL',
  'COPY',
  'MOVE',
  'LOCK',
  'UNLOCK',
  'ACL',
];
const DAV_ALLOW = 'OPTIONS, GET, HEAD, PROPFIND, REPORT';
/** A multiget of 1000 hrefs is about 80 KiB. */
const DAV_BODY_LIMIT = 512 * 1024;
const FEED_ROUTE = { rateLimit: true, shed: true } as const;
/** Retry-After of a 503 while the feed's rebuild fails. */
const FEED_RETRY_AFTER_S = 60;

function property(qualified: string, inner = ''): DavProperty {
  return { qualified, inner };
}

const SUPPORTED_REPORTS =
  '<d:supported-report><d:report><card:addressbook-multiget/></d:report></d:supported-report><d:supported-report><d:report><card:addressbook-query/></d:report></d:supported-report>';
const READ_PRIVILEGES = '<d:privilege><d:read/></d:privilege>';

function homeProperties(): DavProperties {
  return new Map([
    ['resourcetype', property('d:resourcetype', '<d:collection/><d:principal/>')],
    ['displayname', property('d:displayname', escapeXml(DISPLAY_NAME))],
    ['current-user-principal', property('d:current-user-principal', `<d:href>${CARDDAV_HOME}</d:href>`)],
    ['principal-url', property('d:principal-URL', `<d:href>${CARDDAV_HOME}</d:href>`)],
    ['addressbook-home-set', property('card:addressbook-home-set', `<d:href>${CARDDAV_HOME}</d:href>`)],
    ['supported-report-set', property('d:supported-report-set')],
    ['current-user-privilege-set', property('d:current-user-privilege-set', READ_PRIVILEGES)],
  ]);
}

function bookProperties(snapshot: FeedSnapshot): DavProperties {
  return new Map([
    ['resourcetype', property('d:resourcetype', '<d:collection/><card:addressbook/>')],
    ['displayname', property('d:displayname', escapeXml(DISPLAY_NAME))],
    ['getctag', property('cs:getctag', snapshot.ctag)],
    ['getetag', property('d:getetag', escapeXml(`"${snapshot.ctag}"`))],
    ['sync-token', property('d:sync-token', `urn:phone-reputation:blocklist:${snapshot.ctag}`)],
    ['current-user-principal', property('d:current-user-principal', `<d:href>${CARDDAV_HOME}</d:href>`)],
    ['addressbook-home-set', property('card:addressbook-home-set', `<d:href>${CARDDAV_HOME}</d:href>`)],
    ['supported-report-set', property('d:supported-report-set', SUPPORTED_REPORTS)],
    ['current-user-privilege-set', property('d:current-user-privilege-set', READ_PRIVILEGES)],
    [
      'supported-address-data',
      property('card:supported-address-data', '<card:address-data-type content-type="text/vcard" version="3.0"/>'),
    ],
    ['addressbook-description', property('card:addressbook-description', 'Numbers this deployment blocks')],
  ]);
}

function cardProperties(card: FeedCardFile, withData: boolean): DavProperties {
  const properties = new Map<string, DavProperty>([
    ['resourcetype', property('d:resourcetype')],
    ['getetag', property('d:getetag', escapeXml(card.etag))],
    ['getcontenttype', property('d:getcontenttype', VCARD_TYPE)],
    ['getcontentlength', property('d:getcontentlength', String(card.bytes.length))],
    ['displayname', property('d:displayname', escapeXml(card.uid))],
  ]);
  if (withData) properties.set('address-data', property('card:address-data', escapeXml(card.vcard)));
  return properties;
}

/** The Depth header: 0, or 1 (infinity is answered as 1: the tree is two levels deep). */
function depthOf(request: FastifyRequest): 0 | 1 {
  return request.headers.depth === '0' ? 0 : 1;
}

/** What a request's href names: a card of the address book (by its last segment). */
function cardNameOf(href: string): string | undefined {
  let path = href;
  try {
    path = new URL(href, 'http://feed.invalid').pathname;
    path = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  return path.startsWith(ADDRESS_BOOK) ? path.slice(ADDRESS_BOOK.length) : undefined;
}

/** A request that gets the feed's content: a REPORT of the address book, or a GET of its cards or files. */
function fetchesContent(request: FastifyRequest): boolean {
  const url = request.routeOptions.url;
  if (request.method === 'REPORT') return true;
  return (
    request.method === 'GET' && (url === ADDRESS_BOOK || url === '/feed/blocklist.vcf' || url === '/feed/blocklist.csv')
  );
}

function sendFile(request: FastifyRequest, reply: FastifyReply, file: FeedFile, contentType: string): FastifyReply {
  reply.header('etag', file.etag).header('cache-control', 'private, no-cache');
  if (matchesEtag(request.headers['if-none-match'], file.etag)) return reply.code(304).send();
  return reply.header('content-type', contentType).send(file.bytes);
}

function sendMultistatus(reply: FastifyReply, body: Buffer): FastifyReply {
  return reply.code(207).header('content-type', XML_TYPE).header('cache-control', 'private, no-cache').send(body);
}

// A client asks the same PROPFIND and REPORT at every sync: their answers are held with the
// snapshot (content version) they were made from, found first by the request's own text (no
// parsing) and then by its shape (what it asks for, whatever the XML's spelling), so a repeated
// one costs no rendering. A multiget naming every card in the address book's order is the shape
// `multiget-all`, whatever its bytes. When the content changes, the shapes asked for before are
// rendered again for the new snapshot off the request path, in slices (renderInSlices).
const MAX_HELD_ANSWERS = 16;

/** How to render one shape of answer from a snapshot: its responses, one by one. */
type AnswerRenderer = (snapshot: FeedSnapshot) => Iterable<string>;

/** The responses as steps (run in slices): one step per response, all of them at the end. */
function* collected(responses: Iterable<string>): Steps<string[]> {
  const all: string[] = [];
  for (const response of responses) {
    all.push(response);
    yield;
  }
  return all;
}

function answerKey(request: FastifyRequest, depth: 0 | 1): string {
  return `${request.method} ${request.url} ${depth} ${typeof request.body === 'string' ? request.body : ''}`;
}

function shapeKey(url: string, depth: 0 | 1, dav: DavRequest): string {
  return `${url} ${depth} ${dav.root} ${dav.allprop ? 'allprop' : dav.props.join(',')}`;
}

/** Whether a multiget names every card, in the address book's order, by its own href. */
function namesEveryCard(snapshot: FeedSnapshot, hrefs: readonly string[]): boolean {
  if (hrefs.length !== snapshot.cards.length) return false;
  for (let index = 0; index < hrefs.length; index += 1)
    if (hrefs[index] !== `${ADDRESS_BOOK}${snapshot.cards[index]?.name ?? ''}`) return false;
  return true;
}

function davRequestOf(request: FastifyRequest): DavRequest {
  return parsedOrRefused(parseDavRequest(bodyOf(request)));
}

/** davRequestOf in slices: a multiget of a thousand hrefs is about 80 KiB of XML. */
async function davRequestInSlices(request: FastifyRequest, slicer: Slicer): Promise<DavRequest> {
  return parsedOrRefused(await slicer.run(davRequestSteps(bodyOf(request))));
}

const bodyOf = (request: FastifyRequest): string => (typeof request.body === 'string' ? request.body : '');

function parsedOrRefused(parsed: DavRequest | undefined): DavRequest {
  if (parsed === undefined)
    throw new ApiError('bad_request', 'The request body is not a WebDAV XML document this server understands.');
  return parsed;
}

export async function feedRoutes(app: FastifyInstance, options: FeedRoutesOptions): Promise<void> {
  const { onFetch } = options;
  if (onFetch !== undefined)
    app.addHook('onResponse', (request, reply, done) => {
      if (reply.statusCode < 400 && fetchesContent(request))
        onFetch(request.headers['user-agent'], options.feed.snapshot().entries.length);
      done();
    });
  const { feed } = options;
  const typed = app.withTypeProvider<TypeBoxTypeProvider>();
  const credentialsMatch = basicCheck(options.user, options.password);
  // Bodies of PROPFIND and REPORT, whatever they say they are (clients send text/xml,
  // application/xml, or nothing).
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: DAV_BODY_LIMIT }, (_request, body, done) =>
    done(null, body),
  );

  async function authenticate(request: FastifyRequest): Promise<void> {
    const { credentialFailures } = request.server;
    credentialFailures.refuseLockedOut(request);
    if (credentialsMatch(request.headers.authorization)) return;
    // A request with no credential is a client's first step (a DAV client asks, then sends
    // them), not a guess: only a wrong one counts.
    if (request.headers.authorization !== undefined) credentialFailures.recordFailure(request);
    throw new ApiError('unauthorized', 'This feed needs its user name and password (HTTP Basic).', undefined, {
      'WWW-Authenticate': `Basic realm="${REALM}", charset="UTF-8"`,
    });
  }
  async function refuseWrite(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Answered before the body is read: the rest of it must not be read as the next request.
    if (request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined)
      reply.header('connection', 'close');
    await reply
      .code(403)
      .header('content-type', XML_TYPE)
      .header('cache-control', 'no-store')
      .send(needPrivilegesError(request.url.split('?')[0] ?? request.url));
  }
  const davOptions = async (_request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
    reply.code(204).header('allow', DAV_ALLOW).header('dav', '1, 3, addressbook').send();

  // RFC 6764: the well-known URI points at the context path. No credentials needed to learn it.
  for (const method of ['GET', 'PROPFIND'] as const) {
    typed.route({
      method,
      url: '/.well-known/carddav',
      config: FEED_ROUTE,
      schema: HIDDEN,
      bodyLimit: DAV_BODY_LIMIT,
      handler: async (_request, reply) =>
        reply.code(301).header('location', CARDDAV_HOME).header('cache-control', 'no-store').send(),
    });
  }

  /**
   * The held snapshot, or a 503 while the last rebuild failed: a stale snapshot could still list
   * a number allowed since, so it is not served as if current (the failure is logged).
   */
  const current = (): FeedSnapshot => {
    if (feed.failing() !== undefined) {
      throw new ApiError(
        'feed_unavailable',
        'The blocklist could not be rebuilt; it is not served stale. Keep the copy you have and retry later.',
        undefined,
        { 'Retry-After': String(FEED_RETRY_AFTER_S) },
      );
    }
    return feed.snapshot();
  };

  const heldAnswers = new WeakMap<FeedSnapshot, Map<string, Buffer>>();
  /** The shapes asked for so far (at most MAX_HELD_ANSWERS), rendered again at each change. */
  const askedShapes = new Map<string, AnswerRenderer>();
  const answersOf = (snapshot: FeedSnapshot): Map<string, Buffer> => {
    let answers = heldAnswers.get(snapshot);
    if (answers === undefined) heldAnswers.set(snapshot, (answers = new Map<string, Buffer>()));
    return answers;
  };
  const hold = (answers: Map<string, Buffer>, key: string, body: Buffer): void => {
    if (answers.size < MAX_HELD_ANSWERS * 2) answers.set(key, body);
  };

  /** A multistatus rendered in slices, the event loop let through between them. */
  const renderInSlices = async (
    render: AnswerRenderer,
    snapshot: FeedSnapshot,
    slicer: Slicer = createSlicer(),
  ): Promise<Buffer> => Buffer.from(multistatus(await slicer.run(collected(render(snapshot)))), 'utf8');

  /**
   * The answer to a PROPFIND or REPORT: held bytes when this request (or its shape) was answered
   * for this snapshot; otherwise parsed, rendered in slices (a first multiget of every card
   * never holds the loop whole) and held. `shapeOf` gives the shape's key and renderer, or
   * undefined for an answer that depends on the request's own hrefs.
   */
  const answer = async (
    request: FastifyRequest,
    depth: 0 | 1,
    shapeOf: (dav: DavRequest, snapshot: FeedSnapshot) => { key?: string; render: AnswerRenderer },
  ): Promise<Buffer> => {
    const snapshot = current();
    const answers = answersOf(snapshot);
    const raw = answerKey(request, depth);
    const known = answers.get(raw);
    if (known !== undefined) return known;
    // One slicer for the parse and the rendering, so that their slices never add up.
    const slicer = createSlicer();
    const dav = await davRequestInSlices(request, slicer);
    const shape = shapeOf(dav, snapshot);
    let body = shape.key === undefined ? undefined : answers.get(shape.key);
    if (body === undefined) {
      body = await renderInSlices(shape.render, snapshot, slicer);
      if (shape.key !== undefined) {
        hold(answers, shape.key, body);
        if (askedShapes.size < MAX_HELD_ANSWERS) askedShapes.set(shape.key, shape.render);
      }
    }
    hold(answers, raw, body);
    return body;
  };

  // When the content changes, the shapes asked for before are rendered for the new snapshot in
  // slices (renderInSlices), so the next sync finds them held.
  let warming = Promise.resolve();
  feed.onChange((snapshot) => {
    warming = warming
      .then(async () => {
        for (const [key, render] of [...askedShapes]) {
          if (feed.snapshot() !== snapshot) return;
          const answers = answersOf(snapshot);
          if (answers.has(key)) continue;
          const body = await renderInSlices(render, snapshot);
          if (!answers.has(key)) hold(answers, key, body);
          await letLoopThrough();
        }
      })
      .catch(() => undefined);
  });

  const collections: Array<{
    url: string;
    propfind(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  }> = [
    {
      url: CARDDAV_HOME,
      propfind: async (request, reply) => {
        const depth = depthOf(request);
        return sendMultistatus(
          reply,
          await answer(request, depth, (dav) => ({
            key: shapeKey(CARDDAV_HOME, depth, dav),
            render: function* (snapshot) {
              yield davResponse(CARDDAV_HOME, homeProperties(), dav);
              if (depth === 1) yield davResponse(ADDRESS_BOOK, bookProperties(snapshot), dav);
            },
          })),
        );
      },
    },
    {
      url: ADDRESS_BOOK,
      propfind: async (request, reply) => {
        const depth = depthOf(request);
        return sendMultistatus(
          reply,
          await answer(request, depth, (dav) => ({
            key: shapeKey(ADDRESS_BOOK, depth, dav),
            render: function* (snapshot) {
              yield davResponse(ADDRESS_BOOK, bookProperties(snapshot), dav);
              if (depth === 1)
                for (const card of snapshot.cards)
                  yield davResponse(`${ADDRESS_BOOK}${card.name}`, cardProperties(card, false), dav);
            },
          })),
        );
      },
    },
  ];

  const everyCard = (dav: DavRequest): AnswerRenderer =>
    function* (snapshot) {
      for (const card of snapshot.cards)
        yield davResponse(`${ADDRESS_BOOK}${card.name}`, cardProperties(card, true), dav);
    };
  const report = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const body = await answer(request, 1, (dav, snapshot) => {
      if (dav.root === 'addressbook-multiget') {
        // Every card by its own href in order: the same bytes as rendering the hrefs one by one.
        if (namesEveryCard(snapshot, dav.hrefs))
          return { key: shapeKey(request.url, 1, { ...dav, root: 'multiget-all', hrefs: [] }), render: everyCard(dav) };
        return {
          render: (current) =>
            dav.hrefs.map((href) => {
              const name = cardNameOf(href);
              const card = name === undefined ? undefined : current.byName.get(name);
              return card === undefined ? davMissing(href) : davResponse(href, cardProperties(card, true), dav);
            }),
        };
      }
      // Filters are not applied: every card of this one-purpose address book is returned.
      if (dav.root === 'addressbook-query') return { key: shapeKey(request.url, 1, dav), render: everyCard(dav) };
      throw new ApiError('forbidden', 'Only the addressbook-multiget and addressbook-query reports are supported.');
    });
    return sendMultistatus(reply, body);
  };

  for (const collection of collections) {
    typed.route({
      method: 'PROPFIND',
      url: collection.url,
      config: FEED_ROUTE,
      schema: HIDDEN,
      bodyLimit: DAV_BODY_LIMIT,
      preParsing: authenticate,
      handler: async (request, reply) => collection.propfind(request, reply),
    });
    typed.route({
      method: 'REPORT',
      url: collection.url,
      config: FEED_ROUTE,
      schema: HIDDEN,
      bodyLimit: DAV_BODY_LIMIT,
      preParsing: authenticate,
      handler: report,
    });
    typed.route({ method: 'OPTIONS', url: collection.url, config: FEED_ROUTE, schema: HIDDEN, handler: davOptions });
    typed.route({
      method: WRITE_METHODS,
      url: collection.url,
      config: FEED_ROUTE,
      schema: HIDDEN,
      preParsing: [authenticate, refuseWrite],
      handler: refuseWrite,
    });
  }
  typed.route({
    method: 'GET',
    url: ADDRESS_BOOK,
    config: FEED_ROUTE,
    schema: HIDDEN,
    preParsing: authenticate,
    handler: async (request, reply) => sendFile(request, reply, current().vcf, VCARD_TYPE),
  });

  const cardOf = (name: string): FeedCardFile => {
    const card = current().byName.get(name);
    if (card === undefined)
      throw new ApiError('route_not_found', 'No such card (the address book changed: sync again).');
    return card;
  };
  const CARD = `${ADDRESS_BOOK}:name`;
  const cardSchema = { ...HIDDEN, params: CardParamsSchema };
  typed.route({
    method: 'GET',
    url: CARD,
    config: FEED_ROUTE,
    schema: cardSchema,
    preParsing: authenticate,
    handler: async (request, reply) => sendFile(request, reply, cardOf(request.params.name), VCARD_TYPE),
  });
  typed.route({
    method: 'PROPFIND',
    url: CARD,
    config: FEED_ROUTE,
    schema: cardSchema,
    bodyLimit: DAV_BODY_LIMIT,
    preParsing: authenticate,
    handler: async (request, reply) => {
      const card = cardOf(request.params.name);
      return sendMultistatus(
        reply,
        Buffer.from(
          multistatus([davResponse(`${ADDRESS_BOOK}${card.name}`, cardProperties(card, false), davRequestOf(request))]),
          'utf8',
        ),
      );
    },
  });
  typed.route({ method: 'OPTIONS', url: CARD, config: FEED_ROUTE, schema: HIDDEN, handler: davOptions });
  typed.route({
    method: WRITE_METHODS,
    url: CARD,
    config: FEED_ROUTE,
    schema: HIDDEN,
    preParsing: [authenticate, refuseWrite],
    handler: refuseWrite,
  });

  // The same content as files.
  typed.get(
    '/feed/blocklist.vcf',
    { config: FEED_ROUTE, schema: HIDDEN, preParsing: authenticate },
    async (request, reply) => sendFile(request, reply, current().vcf, VCARD_TYPE),
  );
  typed.get(
    '/feed/blocklist.csv',
    { config: FEED_ROUTE, schema: HIDDEN, preParsing: authenticate },
    async (request, reply) => sendFile(request, reply, current().csv, 'text/csv; charset=utf-8'),
  );
  typed.get(
    '/integrations/spamblocker/workflow.json',
    { config: FEED_ROUTE, schema: HIDDEN, preParsing: authenticate },
    async (request, reply) => {
      const base = publicBase(request, options.publicUrl);
      // The caller's own credentials, which it just proved, go into the workflow's download header.
      const credentials = basicCredentialsOf(request.headers.authorization)?.encoded ?? '';
      reply.header('cache-control', 'private, no-store').header('content-type', 'application/json; charset=utf-8');
      if (base.warning !== undefined) reply.header('x-public-url-warning', PUBLIC_URL_WARNINGS[base.warning].sentence);
      return reply.send(`${JSON.stringify(spamBlockerWorkflow(base.url, credentials, base.warning), null, 2)}\n`);
    },
  );
}

/** What a feed path answers while the feed is off: says why, and what turns it on. */
export const FEED_OFF_DETAIL =
  'The blocklist feed is off on this service: its administrator turns it on by setting FEED_PASSWORD (docs/integrations/blocklist-feed.md).';

/** Every path the feed answers on when it is on, and that answers why not when it is off. */
export const FEED_PATHS = [
  '/.well-known/carddav',
  CARDDAV_HOME,
  ADDRESS_BOOK,
  `${ADDRESS_BOOK}:name`,
  '/feed/blocklist.vcf',
  '/feed/blocklist.csv',
  '/integrations/spamblocker/workflow.json',
] as const;

/**
 * Registered when FEED_PASSWORD is unset: every path of the feed, with any method, answers a
 * 404 problem that names FEED_PASSWORD, so a Fritz!Box's or a phone's owner learns why, where a
 * bare "Route not found" said nothing. Rate limited like the feed (an unknown path is too).
 */
export async function feedOffRoutes(app: FastifyInstance): Promise<void> {
  const off = async (): Promise<never> => {
    throw new ApiError('route_not_found', FEED_OFF_DETAIL);
  };
  for (const url of FEED_PATHS) {
    app.route({
      method: app.supportedMethods.filter((method) => method !== 'HEAD'),
      url,
      config: FEED_ROUTE,
      schema: HIDDEN,
      preParsing: off,
      handler: off,
    });
  }
}
