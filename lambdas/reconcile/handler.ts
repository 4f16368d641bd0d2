import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { reconcile } from './reconcile.ts';

type Event = Parameters<typeof reconcile>[1];

/** Lambda entry point: a thin wrapper; the logic is `reconcile` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => reconcile(await engineDeps(), event));
