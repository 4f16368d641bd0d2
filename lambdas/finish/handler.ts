import { engineHandler } from '../lib/engine/handler.ts';
import { finish } from './finish.ts';

/** Lambda entry point: the logic is `finish` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('Finish', finish);
