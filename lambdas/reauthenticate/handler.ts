import { engineHandler } from '../lib/engine/handler.ts';
import { reauthenticate } from './reauthenticate.ts';

/** Lambda entry point: the logic is `reauthenticate` (pure, takes its dependencies); see `engineHandler`. */
export const handler = engineHandler('Reauthenticate', reauthenticate);
