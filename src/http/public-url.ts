// The deployment's public base URL, for what the service hands out to be fetched later (the
// SpamBlocker configs' download URLs): PUBLIC_URL, else what the request and a trusted proxy say.
// A config built from a guess, or naming a loopback host a phone cannot reach, says so
// (publicBase's `warning`), so that whoever pastes it learns to set PUBLIC_URL.
import type { FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

const HOST = /^(?:[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The port a scheme implies, left out of a URL. */
const DEFAULT_PORT: Readonly<Record<'http' | 'https', string>> = { http: '80', https: '443' };

/**
 * The port a trusted proxy says the client reached (X-Forwarded-Port, the last value), or
 * undefined. Trusted means what TRUST_PROXY says of the proxy that sent it: Fastify's `ips` holds
 * more than the socket's address only when that peer is trusted and sent X-Forwarded-For (every
 * proxy that sends X-Forwarded-Port does), so a client's own header is never read.
 */
function forwardedPort(request: FastifyRequest): string | undefined {
  const header = request.headers['x-forwarded-port'];
  if (header === undefined || request.ips === undefined || request.ips.length < 2) return undefined;
  const value = (Array.isArray(header) ? header.join(',') : header).split(',').pop()?.trim() ?? '';
  const port = /^[0-9]{1,5}$/.test(value) ? Number(value) : 0;
  return port >= 1 && port <= 65535 ? String(port) : undefined;
}

/**
 * The deployment's public base URL, without a trailing slash: PUBLIC_URL when set; else the
 * request's protocol, host and port, which Fastify takes from X-Forwarded-Proto and
 * X-Forwarded-Host (and this from X-Forwarded-Port) only when TRUST_PROXY trusts the proxy that
 * sent them, and from the connection and Host otherwise. A forwarded port is kept unless it is
 * the scheme's own: behind a proxy published on 8080, phones are sent to 8080.
 */
export function publicBaseUrl(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return publicUrl.replace(/\/+$/, '');
  const host = request.host;
  if (!HOST.test(host)) throw new ApiError('bad_request', 'The Host header is not a host name: set PUBLIC_URL.');
  const protocol = request.protocol === 'https' ? 'https' : 'http';
  const port = /:\d+$/.test(host) ? undefined : forwardedPort(request);
  return `${protocol}://${host}${port === undefined || port === DEFAULT_PORT[protocol] ? '' : `:${port}`}`;
}

/** Why a served config's base URL may be wrong: built from the request, or naming a loopback host. */
export type PublicUrlWarning = 'guessed' | 'loopback';

/** What each warning tells the reader (the configs' description and the X-Public-URL-Warning header). */
export const PUBLIC_URL_WARNINGS: Readonly<Record<PublicUrlWarning, { short: string; sentence: string }>> = {
  loopback: {
    short: 'loopback address: set PUBLIC_URL',
    sentence:
      'This config names a loopback address, which a phone cannot reach: set PUBLIC_URL to the address the phones use.',
  },
  guessed: {
    short: 'address guessed: set PUBLIC_URL',
    sentence:
      "This config's address was guessed from the request (Host, or a trusted proxy's X-Forwarded-*): set PUBLIC_URL.",
  },
};

/** A loopback host (`localhost`, 127.0.0.0/8, `::1`, with or without a port): no phone reaches it. */
export function isLoopbackHost(host: string): boolean {
  const name = host
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    /^127(?:\.\d{1,3}){3}$/.test(name) ||
    name === '::1' ||
    name === '0:0:0:0:0:0:0:1'
  );
}

/** The base URL (publicBaseUrl) and, when it is a guess or a loopback host, the warning to give with it. */
export function publicBase(
  request: FastifyRequest,
  publicUrl: string | undefined,
): { url: string; warning?: PublicUrlWarning } {
  const url = publicBaseUrl(request, publicUrl);
  if (isLoopbackHost(new URL(url).host)) return { url, warning: 'loopback' };
  return publicUrl === undefined ? { url, warning: 'guessed' } : { url };
}
