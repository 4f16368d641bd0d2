#!/usr/bin/env node
// The `belay` command (package.json "bin"): runs the TypeScript CLI through tsx, in this process.
import { register } from 'tsx/esm/api';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
register();
const { runBelay } = await import('../belay.ts');
process.exitCode = await runBelay(process.argv.slice(2));
