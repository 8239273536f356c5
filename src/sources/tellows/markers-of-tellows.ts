// The canary sees two kinds of tellows bodies, the partner API's JSON and the site's page: each
// is checked by the parser that reads it.
import type { MarkerReport } from '../markers.js';
import { markersOfTellowsApi } from './parse-tellows-api.js';
import { markersOfTellowsPage } from './parse-tellows-page.js';

export { markersOfTellowsApi, markersOfTellowsPage };

/** The markers of either body: the API answer (JSON or the invalid-key text) or the HTML page. */
export function markersOfTellows(body: string): MarkerReport[] {
  const looksLikeApi = /"tellows"\s*:|NOT AUTHORIZED REQUEST/i.test(body) && !/<img\b[^>]*scoreimage/i.test(body);
  return looksLikeApi ? markersOfTellowsApi(body) : markersOfTellowsPage(body);
}
