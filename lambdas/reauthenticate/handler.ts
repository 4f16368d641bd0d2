import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { reauthenticate } from './reauthenticate.ts';

type Event = Parameters<typeof reauthenticate>[1];

/** Lambda entry point: a thin wrapper; the logic is `reauthenticate` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => reauthenticate(await engineDeps(), event));
