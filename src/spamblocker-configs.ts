// The SpamBlocker configs the service serves (src/http/routes/spamblocker-routes.ts,
// spamblocker-report.ts), for `phone-rep token create --spamblocker`, which prints them with a
// new token. src/cli may not import src/http (docs/architecture.md); it reaches the builders
// here, as it reaches the answers' schemas through api-contract.ts. Not copied: what the CLI
// prints is what the server serves.
export { spamBlockerQueryApi } from './http/routes/spamblocker-routes.js';
export { spamBlockerReportApi } from './http/routes/spamblocker-report.js';
export { isLoopbackHost } from './http/public-url.js';
