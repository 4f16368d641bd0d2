/**
 * The CDK app, the one entry of `cdk.json` (`npx tsx cdk/app.ts`).
 *
 * Context: `belay:removalPolicy` (retain | destroy), `belay:logRetentionDays`, `belay:nag`
 * (true runs cdk-nag's AwsSolutions pack). Synthesizes without credentials or network.
 */
import { App } from 'aws-cdk-lib';
import { configureApp } from './belay-app.ts';
import { ConfigError } from './errors.ts';

const app = new App();
try {
  configureApp(app);
} catch (error) {
  // A bad context value is a usage error: say what to fix, without a stack trace.
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
app.synth();
