import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { authorize } from './authorize.ts';

type Event = Parameters<typeof authorize>[1];

/** Lambda entry point: a thin wrapper; the logic is `authorize` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => authorize(await engineDeps(), event));
