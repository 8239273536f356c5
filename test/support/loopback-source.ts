// A minimal Source for engine tests and benchmarks: fetches `<baseUrl>/<e164>` on loopback with
// the global fetch and maps the answer the way real adapters do (200 JSON → ok, 404 →
// not_found, 403/429 → blocked with a politeness pause for the whole upstream, 5xx → error
// http_5xx, refused → error connection, deadline → error timeout). It stands in for the real
// adapters, which are built elsewhere against the same interface.
import type { ParsedPhoneNumber } from '../../src/domain/phone-number.js';
import type { SourceDataBySlot, SourceSlot } from '../../src/domain/report.js';
import { blocked, failed, notFound, ok, type Source, type SourceOutcome } from '../../src/domain/ports/source.js';

export interface LoopbackSourceOptions<S extends SourceSlot> {
  slot: S;
  name: string;
  baseUrl: string;
  /** Pause after 403/429 when the answer has no Retry-After. Default 60 000 ms. */
  defaultPauseMs?: number;
}

export interface LoopbackSource<S extends SourceSlot> extends Source<S> {
  /** Times lookup() was called (including answers given from the pause without a request). */
  readonly calls: number;
  /** Epoch ms until which the upstream is paused, or 0. */
  pausedUntil(): number;
}

export function upstreamPath(number: ParsedPhoneNumber): string {
  return `/${encodeURIComponent(number.e164)}`;
}

export function createLoopbackSource<S extends SourceSlot>(options: LoopbackSourceOptions<S>): LoopbackSource<S> {
  let pausedUntil = 0;
  let calls = 0;
  const defaultPauseMs = options.defaultPauseMs ?? 60_000;

  async function fetchOutcome(number: ParsedPhoneNumber, signal: AbortSignal): Promise<SourceOutcome<SourceDataBySlot[S]>> {
    if (Date.now() < pausedUntil) return blocked('paused', pausedUntil - Date.now());
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${options.baseUrl}${upstreamPath(number)}`, { signal });
      text = await response.text();
    } catch {
      return failed(signal.aborted ? 'timeout' : 'connection');
    }
    if (response.status === 200) {
      try {
        return ok(JSON.parse(text) as SourceDataBySlot[S]);
      } catch {
        return failed('invalid_json');
      }
    }
    if (response.status === 404) return notFound();
    if (response.status === 403 || response.status === 429) {
      const retryAfterS = Number(response.headers.get('retry-after'));
      const pauseMs = Number.isFinite(retryAfterS) && retryAfterS > 0 ? retryAfterS * 1000 : defaultPauseMs;
      pausedUntil = Date.now() + pauseMs;
      return blocked(`http_${response.status}`, pauseMs);
    }
    if (response.status >= 500) return failed('http_5xx');
    return failed('http_status');
  }

  return {
    slot: options.slot,
    name: options.name,
    get calls() {
      return calls;
    },
    pausedUntil: () => pausedUntil,
    lookup(number, signal) {
      calls += 1;
      return fetchOutcome(number, signal);
    },
  };
}
