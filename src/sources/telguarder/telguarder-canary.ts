// How the live canary builds the telguarder source: the service's wiring, with the canary's
// recording fetcher.
import type { CanaryTarget } from '../markers.js';
import { createTelguarderSource, describeTelguarderMarkers, TELGUARDER_UPSTREAM } from './telguarder-source.js';

export const telguarderCanaryTarget: CanaryTarget = {
  name: TELGUARDER_UPSTREAM,
  createSource: (config, makeFetcher) =>
    createTelguarderSource({
      baseUrl: config.TELGUARDER_URL,
      fetcher: makeFetcher(TELGUARDER_UPSTREAM, config.TELGUARDER_RPM),
    }),
  describeMarkers: describeTelguarderMarkers,
};
