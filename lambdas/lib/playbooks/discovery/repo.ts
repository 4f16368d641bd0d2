/** The repository root, resolved from this file (where `node_modules`, `belay/sdk` and `.local/` are). */
import { fileURLToPath } from 'node:url';

export const REPO_ROOT: string = fileURLToPath(new URL('../../../../', import.meta.url)).replace(/\/$/, '');
