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

export default defineConfig({
  test: {
    // Integration suites start real services (DynamoDB Local, Chromium); each file owns its own.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    // Node 20 is a supported runtime here; the SDK's notice about its future releases is noise in test logs.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: FAULT_SUITES } },
      { extends: true, test: { name: 'faults', include: FAULT_SUITES } },
    ],
  },
});
