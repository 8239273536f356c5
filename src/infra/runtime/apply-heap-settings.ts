// Imported first by the server entry, for its side effect: ES modules run in import order, so
// the heap settings are in place before any other module (libphonenumber's metadata, Fastify)
// is loaded.
import { applyHeapSettings } from './heap-settings.js';

export const appliedHeapFlags = applyHeapSettings();
