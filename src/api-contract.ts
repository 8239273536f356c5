// The answers the server publishes (the response schemas of its OpenAPI document), for the one
// client of the API inside this project: `phone-rep lookup|batch --url`, which checks every
// answer against them before it prints or writes anything. src/cli may not import src/http
// (docs/architecture.md); it reaches the contract here, as it reaches the app through app.ts.
// The schemas are not copied: a change to what the server publishes is a change to what the
// CLI accepts.
import { phoneRouteSchemas } from './http/schemas/phone.js';

/** `GET /api/phone/{number}`: each status the route may answer, with its body's schema per media type. */
export const FULL_REPORT_ANSWERS = phoneRouteSchemas.fullReport.response;
