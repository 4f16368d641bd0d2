import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { acquireCapacity } from './acquire-capacity.ts';

type Event = Parameters<typeof acquireCapacity>[1];

/** Lambda entry point: a thin wrapper; the logic is `acquireCapacity` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => acquireCapacity(await engineDeps(), event));
