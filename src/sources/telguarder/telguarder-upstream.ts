// telguarder as the service and the canary see it: one host, a small budget, at most two
// requests in flight, and two request forms (TELGUARDER_LOOKUP) of which neither is confirmed
// for France: the manual canary tries both.
import type { UpstreamDescription } from '../common/wiring.js';
import { fetcherFor, isFrenchNationalNumber } from '../common/wiring.js';
import { createTelguarderSource, TELGUARDER_UPSTREAM } from './telguarder-source.js';
import { markersOfTelguarder } from './parse-telguarder-page.js';

export const telguarderUpstream: UpstreamDescription<'signals'> = {
  name: TELGUARDER_UPSTREAM,
  slot: 'signals',
  hosts: [{ fetcherName: TELGUARDER_UPSTREAM, baseUrlKey: 'TELGUARDER_URL', budgetKey: 'TELGUARDER_RPM' }],
  maxConcurrency: 2,
  // A French site: French-plan numbers only.
  covers: isFrenchNationalNumber,
  createSource: (config, fetchers) =>
    createTelguarderSource({
      baseUrl: config.TELGUARDER_URL,
      lookup: config.TELGUARDER_LOOKUP,
      fetcher: fetcherFor(fetchers, TELGUARDER_UPSTREAM),
    }),
  markers: markersOfTelguarder,
  canaryForms: [
    { label: 'TELGUARDER_LOOKUP=search (POST /fr/search)', setting: { TELGUARDER_LOOKUP: 'search' } },
    { label: 'TELGUARDER_LOOKUP=number (GET /fr/number/…)', setting: { TELGUARDER_LOOKUP: 'number' } },
  ],
};
