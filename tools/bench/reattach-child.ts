/**
 * Child process of the browser section: attaches to a session from a brand-new process,
 * prints `{"libraryMs": ..., "attachMs": ..., "reused": ...}` and detaches (the session lives
 * on). playwright-core is loaded first and timed apart (the adapter loads it on first use). Reads the
 * service from `ANCHORBROWSER_API_KEY` / `ANCHORBROWSER_BASE_URL`, as a Lambda would.
 *
 * Usage: `node --import tsx tools/bench/reattach-child.ts <sessionId>`.
 */
import { browserAdapterFromEnv, preloadBrowserLibraries } from '../../lambdas/lib/browser/adapter.ts';

const sessionId = process.argv[2];
if (!sessionId) throw new Error('usage: reattach-child.ts <sessionId>');
const adapter = browserAdapterFromEnv();
const loading = performance.now();
await preloadBrowserLibraries();
const libraryMs = performance.now() - loading;
const started = performance.now();
const { reused } = await adapter.attach(sessionId, { allowedDomains: [] });
const attachMs = performance.now() - started;
await adapter.detach(sessionId);
console.log(JSON.stringify({ libraryMs, attachMs, reused, uptimeMs: process.uptime() * 1000 }));
