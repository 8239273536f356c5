// tellows as the service and the canary see it: the partner API and the HTML site are two
// hosts, each behind its own fetcher (own pause), both within TELLOWS_RPM.
import type { UpstreamDescription } from '../common/wiring.js';
import { fetcherFor, isFrenchNationalNumber } from '../common/wiring.js';
import { createTellowsSource, TELLOWS_API_FETCHER, TELLOWS_WEB_FETCHER } from './tellows-source.js';
import { markersOfTellows } from './markers-of-tellows.js';

export const tellowsUpstream: UpstreamDescription<'primary'> = {
  name: 'tellows',
  slot: 'primary',
  hosts: [
    { fetcherName: TELLOWS_API_FETCHER, baseUrlKey: 'TELLOWS_API_URL', budgetKey: 'TELLOWS_RPM' },
    { fetcherName: TELLOWS_WEB_FETCHER, baseUrlKey: 'TELLOWS_WEB_URL', budgetKey: 'TELLOWS_RPM' },
  ],
  // The partner API reads any number (with its country); the site only French ones.
  covers: (number, config) => config?.TELLOWS_API_KEY !== undefined || isFrenchNationalNumber(number),
  createSource: (config, fetchers, context) =>
    createTellowsSource({
      apiUrl: config.TELLOWS_API_URL,
      webUrl: config.TELLOWS_WEB_URL,
      ...(config.TELLOWS_API_KEY === undefined ? {} : { apiKey: config.TELLOWS_API_KEY }),
      ...(config.TELLOWS_PARTNER === undefined ? {} : { partner: config.TELLOWS_PARTNER }),
      apiFetcher: fetcherFor(fetchers, TELLOWS_API_FETCHER),
      webFetcher: fetcherFor(fetchers, TELLOWS_WEB_FETCHER),
      ...(context.logger === undefined ? {} : { logger: context.logger }),
    }),
  markers: markersOfTellows,
};
