import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The fault suites: each runs whole jobs many times under injected faults (the reduced chaos
 * run, `npm run playbook -- test` on three playbooks, the browser cap's queue and lease expiry,
 * the benchmark's baselines killed mid-job). They are the long ones, so `npm test` leaves them
 * to `npm run test:faults`; CI runs both.
 */
const FAULT_SUITES = [
  'test/integration/chaos/chaos.test.ts',
  'test/integration/playbooks/playbook-test.test.ts',
  'test/integration/capacity/capacity.test.ts',
  'test/integration/bench/baselines.test.ts',
];

/**
 * Tests against real applications that nobody here wrote (WordPress on MariaDB and PHP, from
 * Debian: `bash scripts/install-real-apps.sh`). They need those packages, so `npm test` leaves
 * them to `npm run test:real-apps`.
 */
const REAL_APP_SUITES = ['test/real-apps/**/*.test.ts'];

/**
 * The docs site's tests: the built site in Chromium (search, accessibility, links) and the
 * getting-started commands against a fresh local stack. `npm run test:docs` builds the site and
 * runs them; CI runs it after `npm test`, which keeps its time.
 */
const DOCS_SITE_SUITES = ['test/integration/docs-site/**/*.test.ts'];

/**
 * Files of `npm test` at once: one and a half per core (3 on 2 cores). Its integration files
 * spend much of their time waiting on browsers, JVMs and worker processes. On 2 cores: 2 at once,
 * each file with a DynamoDB Local of its own, 1,150 s; 3 at once with the shared DynamoDB Local,
 * 951 s (CPU 10 % idle), every test passing.
 * The fault suites keep 2: they measure recovery under load of their own.
 */
const MAIN_WORKERS = Math.max(2, Math.round(availableParallelism() * 1.5));

export default defineConfig({
  test: {
    // Integration suites start real services (Chromium, stacks); each file owns its own, except
    // the one DynamoDB Local that the main project's files needing only a table share (`useDynamoDb`).
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    // Node 20 is a supported runtime here; the SDK's notice about its future releases is noise in test logs.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [...FAULT_SUITES, ...REAL_APP_SUITES, ...DOCS_SITE_SUITES],
          maxWorkers: MAIN_WORKERS,
          globalSetup: ['test/support/global-dynamodb.ts'],
        },
      },
      { extends: true, test: { name: 'faults', include: FAULT_SUITES } },
      { extends: true, test: { name: 'real-apps', include: REAL_APP_SUITES } },
      { extends: true, test: { name: 'docs', include: DOCS_SITE_SUITES, maxWorkers: 1 } },
    ],
  },
});
