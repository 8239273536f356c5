// The report API that `lookup` and `batch` ask: the service built in this process (the default),
// or a running server with `--url`.
import { loadConfig, type Config } from '../config/config.js';
import { UsageError, type CliContext } from './command.js';
import { createInProcessApi, createRemoteApi, type PhoneApi } from './phone-api.js';

/**
 * The service config for an in-process lookup: no API rate limit (the upstream budgets still
 * apply), no load shedding (the start-up's own data loading would read as event-loop
 * pressure), no metrics, no logs.
 */
function loadInProcessConfig(context: CliContext): Config {
  return loadConfig({
    LOG_LEVEL: 'silent',
    ...context.env,
    RATE_LIMIT_MAX: '0',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    METRICS_ENABLED: 'false',
  });
}

export async function openApi(
  url: string | undefined,
  context: CliContext,
  onRateLimited?: (seconds: number) => void,
): Promise<PhoneApi> {
  if (url !== undefined) {
    if (!/^https?:\/\/[^\s/]+/.test(url))
      throw new UsageError(`--url must be an http(s) URL, got ${JSON.stringify(url)}`);
    return createRemoteApi({
      baseUrl: url,
      defaultRegion: context.env.DEFAULT_REGION ?? 'FR',
      ...(onRateLimited ? { onRateLimited } : {}),
    });
  }
  return createInProcessApi(loadInProcessConfig(context), context.io.overrides);
}
