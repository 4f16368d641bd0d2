import { engineHandler } from '../lib/engine/handler.ts';
import { reconcile } from './reconcile.ts';

/** Lambda entry point: the logic is `reconcile` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('Reconcile', reconcile);
