// The deployment's public base URL, for what the service hands out to be fetched later (the
// SpamBlocker configs' download URLs): PUBLIC_URL, else what the request and a trusted proxy say.
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
