// How the CLI asks for a report: in-process by default (the real app built from the same
// composition root and driven with inject(), so the output is the API's exact JSON), or a
// running server with --url. Remote 429s are honoured: wait Retry-After, then try again.
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { buildApp } from '../app.js';
import type { Config } from '../config/config.js';
import { createServiceDependencies, type ServiceOverrides } from '../composition.js';
import type { ApiAnswer } from './api-answer.js';
import { factsOfParsedNumber, readProblemFacts } from './facts.js';
import { readCappedBody } from '../infra/http/read-capped-body.js';

export interface PhoneApi {
  getReport(raw: string): Promise<ApiAnswer>;
  /** The de-duplication key of a raw line: its E.164 form, or undefined when it does not parse. */
  normalise(raw: string): string | undefined;
  /** Sliding-window pace for batches: the upstreams' smallest per-minute budget in-process; none remotely (the server's 429s pace us). */
  requestsPerMinute: number | undefined;
  close(): Promise<void>;
}

const reportPath = (raw: string): string => `/api/phone/${encodeURIComponent(raw)}`;

function retryAfterOf(value: string | string[] | number | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const seconds = Number(text);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

export async function createInProcessApi(config: Config, overrides: ServiceOverrides = {}): Promise<PhoneApi> {
  const deps = await createServiceDependencies(config, undefined, overrides);
  const app = await buildApp({ ...deps.app, webPage: false });
  await app.ready();
  const parse = deps.app.parsePhoneNumber;
  return {
    async getReport(raw) {
      const response = await app.inject({ method: 'GET', url: reportPath(raw) });
      const retryAfterSeconds = retryAfterOf(response.headers['retry-after']);
      // The numbering plan is right here: the facts of a 502 need nothing from its body.
      const parsed = response.statusCode === 502 ? parse(raw) : undefined;
      return {
        status: response.statusCode,
        body: response.body,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
        ...(parsed?.ok === true ? { facts: factsOfParsedNumber(parsed.value) } : {}),
      };
    },
    normalise(raw) {
      const parsed = parse(raw);
      return parsed.ok ? parsed.value.e164 : undefined;
    },
    requestsPerMinute: Math.min(config.TELLOWS_RPM, config.NUMEROINCONNU_RPM, config.TELGUARDER_RPM),
    close: async () => {
      await app.close();
      await deps.close();
    },
  };
}

export interface RemoteApiOptions {
  baseUrl: string;
  defaultRegion: string;
  /** Longest single wait on a 429 (seconds). Default 120. */
  maxRetryAfterSeconds?: number;
  /** 429s tolerated for one number before giving up. Default 5. */
  maxRateLimitRetries?: number;
  /** Request deadline (ms). Default 30 000. */
  timeoutMs?: number;
  /** Largest answer read (bytes). Default MAX_ANSWER_BYTES. */
  maxBodyBytes?: number;
  onRateLimited?: (waitSeconds: number) => void;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The largest answer read from a server: a report is a few KiB, and a hostile server could stream without end. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** The body as text, given up as soon as it passes `maxBytes`. */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  const bytes = await readCappedBody(response, maxBytes);
  if (bytes === undefined) throw new Error(`the server's answer is larger than ${maxBytes} bytes`);
  return bytes.toString('utf8');
}

export function createRemoteApi(options: RemoteApiOptions): PhoneApi {
  const base = options.baseUrl.replace(/\/+$/, '');
  const sleep = options.sleep ?? defaultSleep;
  const maxWait = options.maxRetryAfterSeconds ?? 120;
  const maxRetries = options.maxRateLimitRetries ?? 5;
  return {
    async getReport(raw) {
      for (let attempt = 0; ; attempt += 1) {
        const response = await fetch(`${base}${reportPath(raw)}`, {
          headers: { Accept: 'application/json' },
          signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        });
        const body = await readCapped(response, options.maxBodyBytes ?? MAX_ANSWER_BYTES);
        const retryAfterSeconds = retryAfterOf(response.headers.get('retry-after') ?? undefined);
        if (response.status === 429 && attempt < maxRetries) {
          const waitSeconds = Math.min(maxWait, Math.max(1, retryAfterSeconds ?? 1));
          options.onRateLimited?.(waitSeconds);
          await sleep(waitSeconds * 1000);
          continue;
        }
        const facts = response.status === 502 ? readProblemFacts(body) : undefined;
        return {
          status: response.status,
          body,
          ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
          ...(facts === undefined ? {} : { facts }),
        };
      }
    },
    normalise(raw) {
      // Only a de-duplication key: the server stays the judge of validity.
      const parsed = /^[0-9+().\s-]+$/.test(raw)
        ? parsePhoneNumberFromString(raw.replace(/^00/, '+'), options.defaultRegion as CountryCode)
        : undefined;
      return parsed?.isValid() === true ? parsed.number : undefined;
    },
    requestsPerMinute: undefined,
    close: async () => {},
  };
}
