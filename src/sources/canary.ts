// The live canary: looks a few numbers up on the real upstreams, through sources built from
// the same upstream descriptions (src/sources/upstreams.ts) as the service, and judges which
// markers the parsers rely on were found in each body the upstream answered. It is how an
// operator learns that a site changed before users do.
//
// Two ways to run it: `phone-rep canary` prints a report (runCanary), and the service can run
// rounds on a schedule (createScheduledCanary, CANARY_INTERVAL_S) through the service's own
// fetchers, so a round spends the same per-upstream budget as lookups and honours their pauses.
// Not part of the test suite against real sites (that needs the internet).
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { Config } from '../config/config.js';
import { anySignal } from '../domain/abort-signals.js';
import type { ParsedPhoneNumber, PhoneNumberParser } from '../domain/phone-number.js';
import { createHttpClient } from '../infra/http/http-client.js';
import type { HttpClient, HttpRequest, UpstreamFetcher } from '../infra/http/types.js';
import { createUpstreamFetchers, type CanaryForm, type UpstreamDescription } from './common/wiring.js';
import type { MarkerReport } from './markers.js';
import { causeOf, type SourceOutcome } from '../domain/ports/source.js';
import { UPSTREAMS } from './upstreams.js';

/**
 * Numbers from ARCEP's ranges reserved for fiction (06 39 98, 01 99 00): never assigned, so
 * they exercise the unknown-number answer without touching anyone's line. Pass a number known
 * to be reported to check the comment markers too.
 */
export const DEFAULT_CANARY_NUMBERS: readonly string[] = ['0639980000', '0199000000'];

/** The canary waits longer than a lookup: a slow site is still a site whose markers we want. */
const CANARY_TIMEOUT_MS = 15_000;

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
    phoneInfo: {
      national: parsed.formatNational(),
      e164,
      type: parsed.getType() ?? '',
      rangeLabel: '',
      originalCarrier: '',
      region: '',
      isNPV: false,
    },
  };
  return { ok: true, value };
};

/** Numbers are personal data even on an operator's terminal: show only their ends. */
export function maskNumber(text: string): string {
  return text.replace(
    /\d{6,}/g,
    (digits) => `${digits.slice(0, 2)}${'•'.repeat(digits.length - 4)}${digits.slice(-2)}`,
  );
}

/**
 * CANARY_NUMBERS: comma-separated items, each `upstream:number` (checked on that upstream only)
 * or a bare `number` (checked on every upstream that has no number of its own). Nothing given
 * for an upstream: DEFAULT_CANARY_NUMBERS.
 */
export function canaryNumbersFor(upstream: string, setting: string | undefined): string[] {
  const items = (setting ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  const own: string[] = [];
  const shared: string[] = [];
  for (const item of items) {
    const colon = item.indexOf(':');
    if (colon < 0) shared.push(item);
    else if (item.slice(0, colon) === upstream) own.push(item.slice(colon + 1));
  }
  if (own.length > 0) return own;
  if (shared.length > 0) return shared;
  return [...DEFAULT_CANARY_NUMBERS];
}

function describeOutcome(outcome: SourceOutcome<unknown>): string {
  switch (outcome.status) {
    case 'ok':
      return `ok ${JSON.stringify(summarise(outcome.data))}`;
    case 'not_found':
      return 'not_found';
    case 'blocked': {
      const retry = outcome.retryAfterMs === undefined ? '' : `, retry in ${Math.ceil(outcome.retryAfterMs / 1000)} s`;
      return `blocked(${outcome.reason}${retry}), cause ${causeOf(outcome)}`;
    }
    case 'error': {
      const named = outcome.missing ?? [];
      const missing = named.length > 0 ? ` (missing ${named.join(', ')})` : '';
      return `error(${outcome.reason}), cause ${causeOf(outcome)}${missing}`;
    }
  }
}

/** What made a pass unhealthy, by name: the required markers a 2xx body lacked, and the causes of failed lookups. */
export function passProblems(pass: CanaryPass): { missing: string[]; causes: string[] } {
  const missing = [...pass.missingRequired].filter(([, isMissing]) => isMissing).map(([marker]) => marker);
  const causes = new Set<string>();
  for (const lookup of pass.lookups) {
    const { outcome } = lookup;
    if (outcome.status === 'error' || outcome.status === 'blocked') causes.add(causeOf(outcome));
  }
  return { missing, causes: [...causes] };
}

/** One line naming what failed on an upstream: every missing marker and failure cause; undefined when nothing did. */
function problemLine(name: string, problems: { missing: string[]; causes: string[] }): string | undefined {
  const parts = [
    ...(problems.missing.length > 0 ? [`MISSING markers: ${problems.missing.join(', ')}`] : []),
    ...(problems.causes.length > 0 ? [`failed lookups: ${problems.causes.join(', ')}`] : []),
  ];
  return parts.length > 0 ? `${name}: ${parts.join('; ')}` : undefined;
}

/** The figures of a slot, with the comment list reduced to its length. */
function summarise(data: unknown): unknown {
  if (typeof data !== 'object' || data === null) return data;
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Array.isArray(value) ? `${value.length} item(s)` : value]),
  );
}

interface RecordedBody {
  method: string;
  url: string;
  status: number;
  body: string;
}

/** Passes every request to the service's fetcher (same budget, same pause) and keeps the bodies. */
function recordingFetcher(inner: UpstreamFetcher, recorded: RecordedBody[]): UpstreamFetcher {
  return {
    upstream: inner.upstream,
    pausedUntil: () => inner.pausedUntil(),
    async fetch(request: HttpRequest) {
      const result = await inner.fetch(request);
      if (result.kind === 'response') {
        recorded.push({
          method: request.method ?? 'GET',
          url: result.response.url,
          status: result.response.status,
          body: result.response.body,
        });
      }
      return result;
    },
  };
}

/** What one number gave on one upstream: the outcome and, per 2xx body, its marker reports. */
export interface CanaryLookup {
  number: string;
  outcome: SourceOutcome<unknown>;
  responses: Array<{ method: string; url: string; status: number; markers: MarkerReport[] | null }>;
}

/** One pass of an upstream over the numbers, in one request form. */
export interface CanaryPass {
  upstream: string;
  /** The request form's label, for upstreams with several (telguarder). */
  form?: string;
  lookups: CanaryLookup[];
  invalidNumbers: string[];
  /** Numbers this upstream does not cover (its `covers`), masked: not asked, as in a lookup. */
  notCovered: string[];
  /**
   * Per required marker seen in any 2xx body: true when one of those bodies lacked it. Empty
   * when no 2xx body was judged (every request blocked or failed): that says nothing of the layout.
   */
  missingRequired: Map<string, boolean>;
  /** Every lookup ended ok/not_found and every 2xx body carried every required marker. */
  healthy: boolean;
}

export interface CanaryPassOptions {
  description: UpstreamDescription;
  config: Config;
  fetchers: ReadonlyMap<string, UpstreamFetcher>;
  numbers: readonly string[];
  parseNumber: PhoneNumberParser;
  form?: CanaryForm;
  signal?: AbortSignal;
}

/** Looks each number up on one upstream, one at a time (the canary is a client too), and judges the bodies. */
export async function runCanaryPass(options: CanaryPassOptions): Promise<CanaryPass> {
  const { description, numbers, parseNumber, form } = options;
  const config = form === undefined ? options.config : { ...options.config, ...form.setting };
  const recorded: RecordedBody[] = [];
  const fetchers = new Map(
    [...options.fetchers].map(([name, fetcher]) => [name, recordingFetcher(fetcher, recorded)] as const),
  );
  const source = description.createSource(config, fetchers, {});
  const pass: CanaryPass = {
    upstream: description.name,
    ...(form === undefined ? {} : { form: form.label }),
    lookups: [],
    invalidNumbers: [],
    notCovered: [],
    missingRequired: new Map(),
    healthy: true,
  };
  for (const raw of numbers) {
    if (options.signal?.aborted === true) break;
    const parsed = parseNumber(raw);
    if (!parsed.ok) {
      pass.invalidNumbers.push(`${maskNumber(raw)} (${parsed.reason})`);
      pass.healthy = false;
      continue;
    }
    // The service would skip it: asking would only test the adapter's unreachable guard.
    if (!description.covers(parsed.value, config)) {
      pass.notCovered.push(maskNumber(parsed.value.number));
      continue;
    }
    recorded.length = 0;
    const timeout = AbortSignal.timeout(CANARY_TIMEOUT_MS);
    const linked = options.signal === undefined ? undefined : anySignal([options.signal, timeout]);
    const outcome = await source.lookup(parsed.value, linked?.signal ?? timeout).finally(() => linked?.release());
    if (outcome.status !== 'ok' && outcome.status !== 'not_found') pass.healthy = false;
    const lookup: CanaryLookup = { number: maskNumber(parsed.value.number), outcome, responses: [] };
    for (const response of recorded) {
      const judged = response.status >= 200 && response.status < 300;
      const markers = judged ? description.markers(response.body) : null;
      lookup.responses.push({
        method: response.method,
        url: maskNumber(response.url),
        status: response.status,
        markers,
      });
      for (const report of markers ?? []) {
        if (report.required === false) continue;
        pass.missingRequired.set(report.marker, (pass.missingRequired.get(report.marker) ?? false) || !report.found);
        if (!report.found) pass.healthy = false;
      }
    }
    pass.lookups.push(lookup);
  }
  return pass;
}

function printPass(pass: CanaryPass, out: (line: string) => void): void {
  for (const invalid of pass.invalidNumbers) out(`  ${invalid}: not a valid number`);
  for (const skipped of pass.notCovered) out(`  ${skipped}: not covered by this upstream (skipped, as lookups do)`);
  for (const lookup of pass.lookups) {
    out(`  ${lookup.number}: ${describeOutcome(lookup.outcome)}`);
    for (const response of lookup.responses) {
      out(`    ${response.method} ${response.url} → ${response.status}`);
      for (const report of response.markers ?? []) {
        const mark = report.found ? 'found  ' : report.required === false ? 'absent ' : 'MISSING';
        out(`      ${mark} ${report.marker}${report.required === false ? ' (optional)' : ''}`);
      }
    }
  }
}

/** True when a form's settings are what the config already says (the form lookups use). */
function isConfiguredForm(form: CanaryForm, config: Config): boolean {
  return Object.entries(form.setting).every(([key, value]) => (config as Record<string, unknown>)[key] === value);
}

/** A pass that found its required markers in at least one body and none missing. */
function answeredWithMarkers(pass: CanaryPass): boolean {
  return pass.missingRequired.size > 0 && [...pass.missingRequired.values()].every((missing) => !missing);
}

export interface CanaryOptions {
  config: Config;
  /** Numbers for every upstream; empty or absent: CANARY_NUMBERS, then DEFAULT_CANARY_NUMBERS. */
  numbers?: readonly string[];
  out: (line: string) => void;
  upstreams?: readonly UpstreamDescription[];
  /** The service's number parser when available; a minimal libphonenumber one otherwise. */
  parseNumber?: PhoneNumberParser;
  client?: HttpClient;
}

/**
 * `phone-rep canary`: runs every upstream on its numbers, in every request form it has, and
 * prints what it saw. True when every lookup of the configured form ended `ok` or `not_found`
 * and every 2xx body carried every required marker.
 */
export async function runCanary(options: CanaryOptions): Promise<boolean> {
  const { config, out } = options;
  const parseNumber = options.parseNumber ?? parseCanaryNumber;
  const ownClient = options.client === undefined ? createHttpClient() : undefined;
  const client = options.client ?? ownClient;
  if (client === undefined) return false;
  let healthy = true;
  // What failed, per upstream (its configured form), named in the last line.
  const problems: string[] = [];
  const note = (name: string, pass: CanaryPass): void => {
    const line = pass.healthy ? undefined : problemLine(name, passProblems(pass));
    if (line !== undefined) {
      out(`  ${line}`);
      problems.push(line);
    }
  };
  try {
    for (const description of options.upstreams ?? UPSTREAMS) {
      out(`== ${description.name}`);
      const numbers =
        options.numbers && options.numbers.length > 0
          ? options.numbers
          : canaryNumbersFor(description.name, config.CANARY_NUMBERS);
      // The same construction as the service: budget and concurrency cap from the description.
      const fetchers = createUpstreamFetchers(description, config, { client });
      const forms = description.canaryForms ?? [];
      if (forms.length === 0) {
        const pass = await runCanaryPass({ description, config, fetchers, numbers, parseNumber });
        printPass(pass, out);
        healthy &&= pass.healthy;
        note(description.name, pass);
        continue;
      }
      const answered: string[] = [];
      for (const form of forms) {
        const configured = isConfiguredForm(form, config);
        out(` -- ${form.label}${configured ? ' (configured)' : ''}`);
        const pass = await runCanaryPass({ description, config, fetchers, numbers, parseNumber, form });
        printPass(pass, out);
        if (answeredWithMarkers(pass)) answered.push(form.label);
        if (configured) {
          healthy &&= pass.healthy;
          note(description.name, pass);
        }
      }
      out(
        answered.length > 0
          ? `  ${description.name}: answered with its required markers via ${answered.join(' and ')}`
          : `  ${description.name}: no request form answered with its required markers`,
      );
    }
  } finally {
    await ownClient?.close();
  }
  if (healthy) out('canary: all upstreams answered and every required marker was found');
  else out(`canary: FAILED${problems.length > 0 ? `: ${problems.join(' | ')}` : ' (see the outcomes above)'}`);
  return healthy;
}

/** Where a scheduled round reports (the service's metrics); absent parts are skipped. */
export interface CanaryReporter {
  setCanaryMarkerMissing?(upstream: string, marker: string, missing: boolean): void;
  setCanaryLastRun?(upstream: string, epochSeconds: number): void;
}

export interface CanaryTimers {
  setTimeout(callback: () => void, ms: number): { unref?: () => unknown };
  clearTimeout(handle: { unref?: () => unknown }): void;
}

export interface ScheduledCanaryOptions {
  config: Config;
  upstreams: readonly UpstreamDescription[];
  /** The service's fetchers per upstream name (see createServiceDependencies). */
  fetchersByUpstream: ReadonlyMap<string, ReadonlyMap<string, UpstreamFetcher>>;
  parseNumber?: PhoneNumberParser;
  intervalMs: number;
  reporter?: CanaryReporter;
  logger?: { warn(details: Record<string, unknown>, message: string): void };
  now?: () => number;
  timers?: CanaryTimers;
}

export interface ScheduledCanary {
  /** Runs one round now; while a round runs, every call gets that same round. Never rejects. */
  runRound(): Promise<void>;
  /** True while the last judged round of this upstream lacked a required marker. */
  layoutChanged(upstream: string): boolean;
  /** Arms the timer (unref'd: it never keeps the process alive). */
  start(): void;
  /** Disarms the timer, cancels a running round and waits for it to end. */
  stop(): Promise<void>;
}

/**
 * CANARY_INTERVAL_S: a round every interval, each upstream in the request form lookups use,
 * through the service's fetchers. The next round is armed only when the current one ended, so
 * two rounds never overlap.
 */
export function createScheduledCanary(options: ScheduledCanaryOptions): ScheduledCanary {
  const { config, upstreams, fetchersByUpstream, reporter, logger } = options;
  const parseNumber = options.parseNumber ?? parseCanaryNumber;
  const now = options.now ?? Date.now;
  const timers: CanaryTimers = options.timers ?? {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
  const missingByUpstream = new Map<string, Map<string, boolean>>();
  let running: Promise<void> | undefined;
  let timer: { unref?: () => unknown } | undefined;
  let stopped = true;
  let controller = new AbortController();

  async function checkUpstream(description: UpstreamDescription, signal: AbortSignal): Promise<void> {
    const fetchers = fetchersByUpstream.get(description.name);
    if (fetchers === undefined) return;
    const pass = await runCanaryPass({
      description,
      config,
      fetchers,
      numbers: canaryNumbersFor(description.name, config.CANARY_NUMBERS),
      parseNumber,
      signal,
    });
    if (signal.aborted) return;
    for (const invalid of pass.invalidNumbers)
      logger?.warn(
        { upstream: description.name, number: invalid },
        'canary: CANARY_NUMBERS holds a number that does not parse',
      );
    // A round that judged no body (every request blocked or failed) says nothing of the layout.
    if (pass.missingRequired.size > 0) {
      missingByUpstream.set(description.name, pass.missingRequired);
      for (const [marker, missing] of pass.missingRequired)
        reporter?.setCanaryMarkerMissing?.(description.name, marker, missing);
      const missing = [...pass.missingRequired].filter(([, isMissing]) => isMissing).map(([marker]) => marker);
      if (missing.length > 0)
        logger?.warn(
          { upstream: description.name, missing },
          'canary: required markers missing, the layout may have changed',
        );
    }
    reporter?.setCanaryLastRun?.(description.name, Math.floor(now() / 1000));
  }

  async function round(): Promise<void> {
    const signal = controller.signal;
    for (const description of upstreams) {
      if (signal.aborted) return;
      try {
        await checkUpstream(description, signal);
      } catch {
        logger?.warn({ upstream: description.name }, 'canary: the round failed on this upstream');
      }
    }
  }

  function arm(): void {
    if (stopped) return;
    timer = timers.setTimeout(() => {
      timer = undefined;
      void runRound().finally(arm);
    }, options.intervalMs);
    timer.unref?.();
  }

  function runRound(): Promise<void> {
    running ??= round().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    runRound,
    layoutChanged: (upstream) => [...(missingByUpstream.get(upstream)?.values() ?? [])].some((missing) => missing),
    start() {
      if (!stopped) return;
      stopped = false;
      controller = new AbortController();
      arm();
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      controller.abort();
      await running;
    },
  };
}
