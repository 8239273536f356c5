// One line that says what just happened (saved, removed, refused), read by screen readers.
import { ApiFailure } from './api.js';
import { t } from './i18n.js';

let region: HTMLElement | undefined;

export function noticeRegion(element: HTMLElement): void {
  region = element;
}

export function notify(text: string, kind: 'ok' | 'error' = 'ok'): void {
  if (region === undefined) return;
  region.textContent = text;
  region.className = `notice notice-${kind}`;
}

/** What a failed call says to the operator: a 429's wait, else the API's detail. */
export function describeFailure(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.status === 429) return t('common.rateLimited', { seconds: error.retryAfterSeconds ?? 60 });
    return t('common.error', { detail: `${error.status} ${error.detail}` });
  }
  return t('common.error', { detail: error instanceof Error ? error.message : String(error) });
}

export function notifyFailure(error: unknown): void {
  notify(describeFailure(error), 'error');
}

/** Runs an action and reports its failure, so no button's click ends in an unhandled rejection. */
export function attempt(action: () => Promise<void>): void {
  action().catch(notifyFailure);
}
