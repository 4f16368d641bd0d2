import { engineHandler } from '../lib/engine/handler.ts';
import { recordFailure } from './record-failure.ts';

/** Lambda entry point: the logic is `recordFailure` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('RecordFailure', recordFailure);
