import middy from '@middy/core';
import { engineDeps } from '../lib/engine/runtime.ts';
import { openSession } from './open-session.ts';

type Event = Parameters<typeof openSession>[1];

/** Lambda entry point: a thin wrapper; the logic is `openSession` (pure, takes its dependencies). */
export const handler = middy(async (event: Event) => openSession(await engineDeps(), event));
