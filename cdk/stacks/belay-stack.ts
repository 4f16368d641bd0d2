/**
 * The Belay stack: the checkpoint ledger now; the handlers, the job state machine and the
 * API as later issues add them. Declarative: constructs and bindings, no logic.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { type BelayConfig, readConfig } from '../config.ts';
import { BelayFunction, type BelayFunctionProps } from '../constructs/belay-function.ts';
import { LedgerTable } from '../constructs/ledger-table.ts';

/** Props of {@link BelayStack}. */
export interface BelayStackProps extends StackProps {
  /**
   * The app's settings.
   * @default - read from the `belay:*` context visible from the stack (see `cdk/config.ts`)
   */
  readonly config?: BelayConfig;
}

/**
 * Everything Belay deploys, in one stack.
 *
 * Where the next pieces go (issue 5), in this constructor after the ledger:
 *
 * 1. One {@link BelayFunction} per handler in `lambdas/<name>/handler.ts`, created with
 *    {@link BelayStack.addFunction} so log retention and removal follow the config, each
 *    bound to what it uses with `bindTable`/`bindStateMachine` (`cdk/constructs/bind.ts`).
 * 2. The job state machine (Standard) from `statemachine/job.asl.json`, inlined unchanged:
 *    `DefinitionBody.fromString(readFileSync(STATE_MACHINE_DEFINITION, 'utf8'))` with
 *    `definitionSubstitutions` mapping each `${XxxFunctionArn}` placeholder of the file to a
 *    function's ARN, plus `stateMachine.grantTaskResponse`-style bindings for the API.
 * 3. The HTTP API whose handlers start executions (a Standard machine cannot be started by
 *    API Gateway's Step Functions integration) and relay people's decisions.
 *
 * @example
 * // issue 5, inside the constructor:
 * const runStep = this.addFunction('RunStep', {
 *   entry: handlerEntry('run-step'),
 *   timeout: Duration.minutes(2),
 *   runtimeModules: PLAYWRIGHT_RUNTIME_MODULES,
 * });
 * bindTable(runStep, this.ledger, { env: 'LEDGER_TABLE', actions: LEDGER_WRITE });
 * const machine = new StateMachine(this, 'JobStateMachine', {
 *   stateMachineType: StateMachineType.STANDARD,
 *   definitionBody: DefinitionBody.fromString(readFileSync(STATE_MACHINE_DEFINITION, 'utf8')),
 *   definitionSubstitutions: { RunStepFunctionArn: runStep.functionArn },
 *   tracingEnabled: true,
 * });
 * runStep.grantInvoke(machine);
 */
export class BelayStack extends Stack {
  /** The settings this stack was built with. */
  readonly config: BelayConfig;
  /** The checkpoint ledger table. */
  readonly ledger: LedgerTable;

  constructor(scope: Construct, id: string, props: BelayStackProps = {}) {
    super(scope, id, props);
    this.config = props.config ?? readConfig(this);

    this.ledger = new LedgerTable(this, 'Ledger', { removalPolicy: this.config.removalPolicy });

    new CfnOutput(this, 'LedgerTableName', {
      value: this.ledger.tableName,
      description: 'The checkpoint ledger table (LEDGER_TABLE of the handlers).',
    });
  }

  /**
   * Adds a handler as a {@link BelayFunction} whose log group follows the stack's config
   * (retention, removal policy) unless `props` says otherwise.
   */
  addFunction(id: string, props: BelayFunctionProps): BelayFunction {
    return new BelayFunction(this, id, {
      logRetention: this.config.logRetention,
      logRemovalPolicy: this.config.removalPolicy,
      ...props,
    });
  }
}
