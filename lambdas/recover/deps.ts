import { sfnClientFromEnv } from '../lib/aws/step-functions.ts';
import { getIntFromEnv, getStringFromEnv } from '../lib/config.ts';
import { sfnExecutionControl } from '../lib/engine/execution-control.ts';
import { engineDepsFromEnv } from '../lib/engine/runtime.ts';
import { bundledPlaybooks } from '../lib/playbooks/bundled.ts';
import { DEFAULT_RECOVERY_SETTINGS, type RecoverDeps, type RecoverySettings } from './recover.ts';

/** `BELAY_MAX_RECOVERIES` (default 3) and `BELAY_SWEEP_GRACE_SECONDS` (default 180). */
export function recoverySettingsFromEnv(env: NodeJS.ProcessEnv = process.env): RecoverySettings {
  return {
    ...DEFAULT_RECOVERY_SETTINGS,
    maxRecoveries: getIntFromEnv(
      'BELAY_MAX_RECOVERIES',
      DEFAULT_RECOVERY_SETTINGS.maxRecoveries,
      { min: 0, max: 20 },
      env,
    ),
    graceSeconds: getIntFromEnv(
      'BELAY_SWEEP_GRACE_SECONDS',
      DEFAULT_RECOVERY_SETTINGS.graceSeconds,
      { min: 0 },
      env,
    ),
  };
}

/**
 * The recovery function's dependencies from the environment: the engine's (`TABLE_NAME`,
 * `BELAY_APPLICATIONS`, the Anchor key to end sessions), `STATE_MACHINE_ARN` (and
 * `SFN_ENDPOINT` locally), and the recovery settings.
 */
export async function recoverDepsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<RecoverDeps> {
  return {
    engine: await engineDepsFromEnv(env, bundledPlaybooks),
    executions: sfnExecutionControl(sfnClientFromEnv(env), getStringFromEnv('STATE_MACHINE_ARN', env)),
    settings: recoverySettingsFromEnv(env),
  };
}

let cached: Promise<RecoverDeps> | undefined;

/** The process's recovery dependencies, built on first use and reused while the process is warm. */
export function recoverDeps(): Promise<RecoverDeps> {
  cached ??= recoverDepsFromEnv().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}
