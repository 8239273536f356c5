// The live canary: looks a few numbers up on the real upstreams, through the same sources,
// fetchers and client as the service, and prints per upstream the outcome and which markers
// the parsers rely on were found. It is how an operator learns that a site changed before
// users do. Not part of the test suite (it needs the internet).
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Config } from '../config/config.js';
import type { ParsedPhoneNumber, PhoneNumberParser } from '../domain/phone-number.js';
import { createHttpClient } from '../infra/http/http-client.js';
import type { HttpClient, HttpRequest, UpstreamFetcher } from '../infra/http/types.js';
import { createUpstreamFetcher } from '../infra/http/upstream-fetcher.js';
import { haveRequiredMarkers, type CanaryTarget } from './markers.js';
import type { SourceOutcome } from './source.js';
import { numeroinconnuCanaryTarget } from './numeroinconnu/numeroinconnu-canary.js';
import { telguarderCanaryTarget } from './telguarder/telguarder-canary.js';
import { tellowsCanaryTarget } from './tellows/tellows-canary.js';

/** Every upstream the canary checks; each adapter adds its target here. */
export const CANARY_TARGETS: readonly CanaryTarget[] = [tellowsCanaryTarget, numeroinconnuCanaryTarget, telguarderCanaryTarget];

/**
 * Numbers from ARCEP's ranges reserved for fiction (06 39 98, 01 99 00): never assigned, so
 * they exercise the unknown-number answer without touching anyone's line. Pass a number known
 * to be reported to check the comment markers too.
 */
export const DEFAULT_CANARY_NUMBERS: readonly string[] = ['0639980000', '0199000000'];

/** The canary waits longer than a lookup: a slow site is still a site whose markers we want. */
const CANARY_TIMEOUT_MS = 15_000;

export interface CanaryOptions {
  config: Config;
  numbers?: readonly string[];
  out: (line: string) => void;
  targets?: readonly CanaryTarget[];
  /** The service's number parser when available; a minimal libphonenumber one otherwise. */
  parseNumber?: PhoneNumberParser;
  client?: HttpClient;
}

interface RecordedBody {
  method: string;
  url: string;
  status: number;
  body: string;
}

const FRENCH_PLAN_CALLING_CODES = new Set(['33', '262', '269', '508', '590', '594', '596', '687', '689']);

/** Enough of a ParsedPhoneNumber for the sources: the canary does not need phoneInfo. */
export const parseCanaryNumber: PhoneNumberParser = (raw) => {
  const parsed = parsePhoneNumberFromString(raw, 'FR');
  if (!parsed?.isValid()) return { ok: false, reason: 'invalid number' };
  const isFrenchPlan = FRENCH_PLAN_CALLING_CODES.has(parsed.countryCallingCode) && parsed.nationalNumber.length === 9;
  const e164 = parsed.number;
  const national = isFrenchPlan ? `0${parsed.nationalNumber}` : null;
  const value: ParsedPhoneNumber = {
    number: national ?? e164,
    e164,
    regionCode: parsed.country ?? '',
    isFrenchPlan,
    frenchNationalDigits: national,
    phoneInfo: { national: parsed.formatNational(), e164, type: parsed.getType() ?? '', rangeLabel: '', originalCarrier: '', region: '', isNPV: false },
  };
  return { ok: true, value };
};

/** Numbers are personal data even on an operator's terminal: show only their ends. */
export function maskNumber(text: string): string {
  return text.replace(/\d{6,}/g, (digits) => `${digits.slice(0, 2)}${'•'.repeat(digits.length - 4)}${digits.slice(-2)}`);
}

function describeOutcome(outcome: SourceOutcome<unknown>): string {
  switch (outcome.status) {
    case 'ok':
      return `ok ${JSON.stringify(summarise(outcome.data))}`;
    case 'not_found':
      return 'not_found';
    case 'blocked':
      return `blocked(${outcome.reason}${outcome.retryAfterMs === undefined ? '' : `, retry in ${Math.ceil(outcome.retryAfterMs / 1000)} s`})`;
    case 'error':
      return `error(${outcome.reason})`;
  }
}

/** The figures of a slot, with the comment list reduced to its length. */
function summarise(data: unknown): unknown {
  if (typeof data !== 'object' || data === null) return data;
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Array.isArray(value) ? `${value.length} item(s)` : value]));
}

function recordingFetcher(inner: UpstreamFetcher, recorded: RecordedBody[]): UpstreamFetcher {
  return {
    upstream: inner.upstream,
    pausedUntil: () => inner.pausedUntil(),
    async fetch(request: HttpRequest) {
      const result = await inner.fetch(request);
      if (result.kind === 'response') {
        recorded.push({ method: request.method ?? 'GET', url: result.response.url, status: result.response.status, body: result.response.body });
      }
      return result;
    },
  };
}

/**
 * Runs every target on every number and prints what it saw. True when every lookup ended
 * `ok` or `not_found` and every 2xx body carried every required marker.
 */
export async function runCanary(options: CanaryOptions): Promise<boolean> {
  const { config, out } = options;
  const numbers = options.numbers && options.numbers.length > 0 ? options.numbers : DEFAULT_CANARY_NUMBERS;
  const parseNumber = options.parseNumber ?? parseCanaryNumber;
  const ownClient = options.client === undefined ? createHttpClient() : undefined;
  const client = options.client ?? ownClient;
  if (client === undefined) return false;
  let healthy = true;
  try {
    for (const target of options.targets ?? CANARY_TARGETS) {
      out(`== ${target.name}`);
      const recorded: RecordedBody[] = [];
      // One request at a time, within the upstream's normal budget: the canary is a client too.
      const makeFetcher = (upstream: string, requestsPerMinute: number) =>
        recordingFetcher(createUpstreamFetcher({ upstream, client, requestsPerMinute, maxConcurrency: 1 }), recorded);
      const source = target.createSource(config, makeFetcher);
      for (const raw of numbers) {
        const parsed = parseNumber(raw);
        if (!parsed.ok) {
          out(`  ${maskNumber(raw)}: not a valid number (${parsed.reason})`);
          healthy = false;
          continue;
        }
        recorded.length = 0;
        const outcome = await source.lookup(parsed.value, AbortSignal.timeout(CANARY_TIMEOUT_MS));
        out(`  ${maskNumber(parsed.value.number)}: ${describeOutcome(outcome)}`);
        if (outcome.status !== 'ok' && outcome.status !== 'not_found') healthy = false;
        for (const response of recorded) {
          out(`    ${response.method} ${maskNumber(response.url)} → ${response.status}`);
          if (response.status < 200 || response.status >= 300) continue;
          const reports = target.describeMarkers(response.body);
          for (const report of reports) {
            const mark = report.found ? 'found  ' : report.required === false ? 'absent ' : 'MISSING';
            out(`      ${mark} ${report.marker}${report.required === false ? ' (optional)' : ''}`);
          }
          if (!haveRequiredMarkers(reports)) healthy = false;
        }
      }
    }
  } finally {
    await ownClient?.close();
  }
  out(healthy ? 'canary: all upstreams answered and every required marker was found' : 'canary: FAILED (see MISSING markers and outcomes above)');
  return healthy;
}
