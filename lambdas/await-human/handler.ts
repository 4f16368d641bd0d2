import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { awaitHuman } from './await-human.ts';

type Event = Parameters<typeof awaitHuman>[1];

/** Lambda entry point: a thin wrapper; the logic is `awaitHuman` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => awaitHuman(await engineDeps(), event));
