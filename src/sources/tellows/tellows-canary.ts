// How the live canary builds the tellows source: the same wiring as the service (API and
// site behind separate fetchers), with the canary's recording fetchers.
import type { CanaryTarget } from '../markers.js';
import { createTellowsSource, describeMarkers } from './tellows-source.js';

export const tellowsCanaryTarget: CanaryTarget = {
  name: 'tellows',
  createSource: (config, makeFetcher) =>
    createTellowsSource({
      apiUrl: config.TELLOWS_API_URL,
      webUrl: config.TELLOWS_WEB_URL,
      ...(config.TELLOWS_API_KEY === undefined ? {} : { apiKey: config.TELLOWS_API_KEY }),
      ...(config.TELLOWS_PARTNER === undefined ? {} : { partner: config.TELLOWS_PARTNER }),
      apiFetcher: makeFetcher('tellows', config.TELLOWS_RPM),
      webFetcher: makeFetcher('tellows-web', config.TELLOWS_RPM),
    }),
  describeMarkers,
};
