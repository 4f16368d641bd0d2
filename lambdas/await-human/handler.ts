import { engineHandler } from '../lib/engine/handler.ts';
import { awaitHuman } from './await-human.ts';

/** Lambda entry point: the logic is `awaitHuman` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('AwaitHuman', awaitHuman);
