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
  /**
   * Asked before a redirect is followed (each request sent counts against the upstream's
   * budget): false stops the fetch there. Set by the fetcher, not by adapters.
   */
  beforeRedirect?: () => Promise<boolean>;
  /** The API client this request is made for (fair queueing and its share of the budget); absent for the service's own requests. */
  client?: FetchClient;
  /** Epoch ms at which the caller's deadline passes: the fetcher sends nothing it cannot give its minimum time on the wire. */
  deadlineAt?: number;
  /** Requests this fetch is expected to send, charged together before the first (2 for a POST answered by a redirect). Default 1. */
  expectedRequests?: number;
}

/** A client as the fetchers know it: a keyed hash of its address, and whether it is exempt (a larger share). */
export interface FetchClient {
  key: string;
  exempt: boolean;
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

/** What a `connection` failure was, from the error code Node or undici gave (http-client.ts, transportCause). */
export type TransportCause = 'dns' | 'refused' | 'reset' | 'tls' | 'connection';

/** `cause`: with `connection`, what the transport said (absent from a client that cannot tell). */
export type HttpResult =
  { kind: 'response'; response: HttpResponse } | { kind: 'failure'; reason: HttpFailureReason; cause?: TransportCause };

/**
 * Why the fetcher refused to send, or the upstream refused us: the upstream is paused after
 * 403/429; `paused`, `budget` and `queue` (no concurrency slot in time) sent nothing.
 */
export type FetchBlockedReason = 'http_403' | 'http_429' | 'paused' | 'budget' | 'queue';
export type FetchErrorReason = HttpFailureReason | 'http_5xx';

/** How a fetch failed, in the fetcher's own terms; each adapter maps it to its source outcome. */
export type FetchFailure =
  | { kind: 'blocked'; reason: FetchBlockedReason; retryAfterMs?: number }
  | { kind: 'error'; reason: FetchErrorReason; cause?: TransportCause | `http_${number}` };

/** `notSent`: the fetcher answered without sending anything (its own pause, budget, queue, or the caller leaving first). */
export type FetchResult =
  { kind: 'response'; response: HttpResponse } | { kind: 'failure'; failure: FetchFailure; notSent?: true };

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
  /**
   * The per-minute budget (`perMinute`) and the requests this instance was granted of it in the
   * last sliding minute (`used`), for the operator console (docs/console.md), which shows the
   * politeness store's shared count instead when there is one.
   */
  budget?(): { used: number; perMinute: number };
}
