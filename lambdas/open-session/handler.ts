import { engineHandler } from '../lib/engine/handler.ts';
import { openSession } from './open-session.ts';

/** Lambda entry point: the logic is `openSession` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('OpenSession', openSession);
