// The contract between adapters and the shared HTTP layer (implemented in http-client.ts and
// upstream-fetcher.ts). Adapters build a request and parse a body; everything about sockets,
// deadlines, caps, charsets, redirects, budgets and pauses happens behind these types.
export interface HttpRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Sent as is; for a form POST set content-type yourself. */
  body?: string;
  /** Aborts the whole fetch (deadline or caller); the client never outlives it. */
  signal: AbortSignal;
  /** Cap on the decoded body in bytes; default about 1 MiB. */
  maxBodyBytes?: number;
}

export interface HttpResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** Decoded text (charset from the response; UTF-8 by default). */
  body: string;
  /** The URL finally answered, after same-origin redirects. */
  url: string;
}

export type HttpFailureReason = 'timeout' | 'aborted' | 'connection' | 'too_large' | 'redirect' | 'decoding';

export type HttpResult = { kind: 'response'; response: HttpResponse } | { kind: 'failure'; reason: HttpFailureReason };

/** Why the fetcher refused to send, or the upstream refused us: the upstream is paused after these. */
export type FetchBlockedReason = 'http_403' | 'http_429' | 'paused' | 'budget';
export type FetchErrorReason = HttpFailureReason | 'http_5xx';

/** How a fetch failed, in the fetcher's own terms; each adapter maps it to its source outcome. */
export type FetchFailure = { kind: 'blocked'; reason: FetchBlockedReason; retryAfterMs?: number } | { kind: 'error'; reason: FetchErrorReason };

export type FetchResult = { kind: 'response'; response: HttpResponse } | { kind: 'failure'; failure: FetchFailure };

export interface HttpClient {
  request(request: HttpRequest): Promise<HttpResult>;
}

/**
 * One per upstream: applies the pause after 403/429, the per-minute budget and the
 * concurrency cap, then classifies transport-level results. What it returns as `response`
 * is any status the adapter must judge itself (2xx, 404, other 4xx); 403/429/5xx and
 * transport failures come back already classified as a `FetchFailure`.
 */
export interface UpstreamFetcher {
  readonly upstream: string;
  fetch(request: HttpRequest): Promise<FetchResult>;
  /** Epoch ms until which the upstream is paused, or 0. */
  pausedUntil(): number;
}
