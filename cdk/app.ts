/**
 * The CDK app, the one entry of `cdk.json` (`npx tsx cdk/app.ts`).
 *
 * Context: `belay:removalPolicy` (retain | destroy), `belay:logRetentionDays`, `belay:nag`, `belay:playbooks`
 * (true runs cdk-nag's AwsSolutions pack). Synthesizes without credentials or network.
 */
import { App } from 'aws-cdk-lib';
import { BelayError } from '../lambdas/lib/errors.ts';
import { playbookDirs } from '../lambdas/lib/playbooks/discovery/find.ts';
import { loadPlaybooks } from '../lambdas/lib/playbooks/discovery/load.ts';
import { registerSdkResolution } from '../lambdas/lib/playbooks/discovery/register.ts';
import { configureApp } from './belay-app.ts';
import { readConfig } from './config.ts';
import { ConfigError } from './errors.ts';

const app = new App();
try {
  // Every playbook is loaded and checked first, as `npm start` does: a bad one (or two with one
  // id) fails the synth with its file named, before anything is bundled.
  registerSdkResolution();
  await loadPlaybooks(playbookDirs(readConfig(app).playbookDirs));
  configureApp(app);
} catch (error) {
  // A bad context value or playbook is a usage error: say what to fix, without a stack trace.
  if (!(error instanceof ConfigError || error instanceof BelayError)) throw error;
  console.error(error.message);
  process.exit(1);
}
app.synth();
