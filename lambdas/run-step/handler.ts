import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { runStep } from './run-step.ts';

type Event = Parameters<typeof runStep>[1];

/** Lambda entry point: a thin wrapper; the logic is `runStep` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => runStep(await engineDeps(), event));
