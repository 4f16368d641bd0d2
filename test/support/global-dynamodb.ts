/**
 * Vitest global setup of the `main` project: one DynamoDB Local (in memory) for the whole run, stopped by its PID when
 * the run ends. Test files that only need a ledger table (`useDynamoDb`) each create their own
 * tables on it and delete them afterwards, instead of each starting a JVM of their own. Stacks
 * (`useEngineStack`) keep their own DynamoDB Local: they are killed and restarted by tests.
 *
 * When it cannot start (no Java), nothing is provided and each file starts its own, whose error
 * names the fix. `BELAY_TEST_SHARED_DYNAMODB=off` (what `npm run test:unit` sets: no unit test
 * needs one) starts none.
 */
import type { TestProject } from 'vitest/node';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../local/dynamodb.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's shared DynamoDB Local (`http://127.0.0.1:<port>`), or '' when it did not start. */
    sharedDynamoDbEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let local: DynamoDbLocal | undefined;
  if (process.env.BELAY_TEST_SHARED_DYNAMODB !== 'off')
    local = await startDynamoDbLocal().catch(() => undefined);
  project.provide('sharedDynamoDbEndpoint', local?.endpoint ?? '');
  return async () => {
    await local?.stop();
  };
}
