import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { finish } from './finish.ts';

type Event = Parameters<typeof finish>[1];

/** Lambda entry point: a thin wrapper; the logic is `finish` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => finish(await engineDeps(), event));
