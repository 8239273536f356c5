// One description per upstream, and the one path that turns a description and the config into
// fetchers and a source. The service (src/composition.ts) and the live canary
// (src/sources/canary.ts) both build through here, so the caps, budgets and URLs a test checks
// are the ones production uses.
import type { Config } from '../../config/config.js';
import type { SourceSlot } from '../../domain/report.js';
import type { PolitenessStore } from '../../infra/http/politeness-store.js';
import type { HttpClient, UpstreamFetcher } from '../../infra/http/types.js';
import { createUpstreamFetcher } from '../../infra/http/upstream-fetcher.js';
import type { MarkerReport } from '../markers.js';
import type { Source } from '../../domain/ports/source.js';
import type { ParsedPhoneNumber } from '../../domain/phone-number.js';

type KeysOfType<T, V> = { [K in keyof T]-?: T[K] extends V ? K : never }[keyof T];
/** Config keys whose value is a base URL or a request budget. */
export type UrlConfigKey = Extract<keyof Config, `${string}_URL`>;
export type BudgetConfigKey = Extract<KeysOfType<Config, number>, `${string}_RPM`>;

export interface SourceContext {
  logger?: { warn(details: Record<string, unknown>, message: string): void };
}

/** One host of an upstream, behind its own fetcher (own pause and budget). */
export interface UpstreamHost {
  /** The fetcher's name in logs, metrics and the politeness store (`tellows`, `tellows-web`, …). */
  fetcherName: string;
  baseUrlKey: UrlConfigKey;
  budgetKey: BudgetConfigKey;
}

/** A request form the manual canary tries (telguarder's two): the settings that select it. */
export interface CanaryForm {
  label: string;
  setting: Partial<Config>;
}

export interface UpstreamDescription<S extends SourceSlot = SourceSlot> {
  /** Upstream name in logs, metrics, readiness and the canary (`tellows`, `numeroinconnu`, `telguarder`). */
  name: string;
  slot: S;
  hosts: readonly UpstreamHost[];
  /**
   * At most this many requests in flight to each host, whatever UPSTREAM_CONCURRENCY says;
   * undefined leaves UPSTREAM_CONCURRENCY alone.
   */
  maxConcurrency?: number;
  /**
   * Whether this upstream can be asked about the number under this configuration: its country
   * coverage, and a key its path needs (tellows reads foreign numbers only through its API).
   * The one place the rule lives: the engine asks it (through the built source's `covers`)
   * before any cache, coalescer, breaker or budget, and answers `skipped` when it says no.
   * `config` defaults to the defaults (no keys).
   */
  covers(number: ParsedPhoneNumber, config?: CoverageConfig): boolean;
  /**
   * Builds the adapter over fetchers keyed by `fetcherName` (each host's fetcher is present).
   * The service builds through `buildSource`, which adds `covers`.
   */
  createSource(config: Config, fetchers: ReadonlyMap<string, UpstreamFetcher>, context: SourceContext): Source<S>;
  /**
   * Which markers the parser relies on, found or not in a body the upstream answered; the
   * required ones are those not marked `required: false`.
   */
  markers: (body: string) => MarkerReport[];
  /** Request forms the manual canary tries in turn (absent: the configured one only). */
  canaryForms?: readonly CanaryForm[];
}

/** The settings coverage depends on. */
export type CoverageConfig = Partial<Pick<Config, 'TELLOWS_API_KEY'>>;

/** The source the engine uses: the adapter, with the description's coverage rule under this config. */
export function buildSource<S extends SourceSlot>(
  description: UpstreamDescription<S>,
  config: Config,
  fetchers: ReadonlyMap<string, UpstreamFetcher>,
  context: SourceContext,
): Source<S> {
  const adapter = description.createSource(config, fetchers, context);
  return {
    slot: adapter.slot,
    name: adapter.name,
    lookup: (number, signal, call) => adapter.lookup(number, signal, call),
    covers: (number) => description.covers(number, config),
  };
}

/** Numbers of the French plan whose 10 national digits go into the site's URL: what the French-only sites can be asked. */
export function isFrenchNationalNumber(number: ParsedPhoneNumber): boolean {
  return number.isFrenchPlan && number.frenchNationalDigits !== null && /^0\d{9}$/.test(number.frenchNationalDigits);
}

export interface SourceWiring {
  client: HttpClient;
  /** Shared politeness state (Redis) for several instances; in memory when absent. */
  politeness?: PolitenessStore;
  now?: () => number;
  /** Wraps each fetcher as it is created (metrics). */
  decorate?: (fetcher: UpstreamFetcher) => UpstreamFetcher;
}

/** The concurrency cap a host of this upstream gets under this config. */
export function concurrencyOf(
  description: Pick<UpstreamDescription, 'maxConcurrency'>,
  config: Pick<Config, 'UPSTREAM_CONCURRENCY'>,
): number {
  return Math.min(config.UPSTREAM_CONCURRENCY, description.maxConcurrency ?? Number.POSITIVE_INFINITY);
}

/**
 * A request that cannot get its concurrency or budget slot in time for at least this long a
 * fetch within its source deadline ends blocked("queue") or blocked("budget") instead of
 * waiting the deadline out: the deadline passing is then always time on the wire.
 */
const MIN_REQUEST_TIME_MS = 1000;

/** The time on the wire a request is sent with at least: a third of the source deadline, 1 s at least (1 s with the default 3 s). */
export function minRequestTimeOf(sourceTimeoutMs: number): number {
  return Math.max(MIN_REQUEST_TIME_MS, Math.round(sourceTimeoutMs / 3));
}

/** One fetcher per host of the upstream, with its budget and concurrency cap from the config. */
export function createUpstreamFetchers(
  description: UpstreamDescription,
  config: Config,
  wiring: SourceWiring,
): Map<string, UpstreamFetcher> {
  const fetchers = new Map<string, UpstreamFetcher>();
  const minRequestTimeMs = minRequestTimeOf(config.SOURCE_TIMEOUT_MS);
  for (const host of description.hosts) {
    const created = createUpstreamFetcher({
      upstream: host.fetcherName,
      client: wiring.client,
      requestsPerMinute: config[host.budgetKey],
      maxConcurrency: concurrencyOf(description, config),
      maxBudgetWaitMs: Math.max(0, config.SOURCE_TIMEOUT_MS - minRequestTimeMs),
      minRequestTimeMs,
      clientSharePct: config.UPSTREAM_CLIENT_SHARE_PCT,
      exemptSharePct: config.UPSTREAM_EXEMPT_SHARE_PCT,
      ...(wiring.now === undefined ? {} : { now: wiring.now }),
      ...(wiring.politeness === undefined ? {} : { politeness: wiring.politeness }),
    });
    fetchers.set(host.fetcherName, wiring.decorate ? wiring.decorate(created) : created);
  }
  return fetchers;
}

/** The fetcher of one host; a description that names a host it did not declare is a programming error. */
export function fetcherFor(fetchers: ReadonlyMap<string, UpstreamFetcher>, fetcherName: string): UpstreamFetcher {
  const fetcher = fetchers.get(fetcherName);
  if (fetcher === undefined) throw new Error(`no fetcher named ${fetcherName} was built for this upstream`);
  return fetcher;
}
