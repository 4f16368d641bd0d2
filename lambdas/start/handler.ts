import { engineHandler } from '../lib/engine/handler.ts';
import { start } from './start.ts';

/** Lambda entry point: the logic is `start` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('Start', start);
