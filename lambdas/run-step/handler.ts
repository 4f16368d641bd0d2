import { engineHandler } from '../lib/engine/handler.ts';
import { runNextStep } from './next-step.ts';

/** Lambda entry point: the logic is `runStep` (pure, takes its dependencies); see `engineHandler` and `runNextStep`. */
export const handler = engineHandler('RunStep', runNextStep);
