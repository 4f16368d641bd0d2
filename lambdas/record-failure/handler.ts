import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { recordFailure } from './record-failure.ts';

type Event = Parameters<typeof recordFailure>[1];

/** Lambda entry point: a thin wrapper; the logic is `recordFailure` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => recordFailure(await engineDeps(), event));
