import { engineHandler } from '../lib/engine/handler.ts';
import { runStep } from './run-step.ts';

/** Lambda entry point: the logic is `runStep` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('RunStep', runStep);
