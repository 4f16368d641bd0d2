/**
 * IAM enforcement for the AWS SDK clients of one process: every command any client sends is
 * mapped to the IAM requests AWS would authorize it by (`requests.ts`) and evaluated against
 * the caller's policy (`evaluate.ts`); a refused call gets the response AWS sends
 * (`refusal.ts`), which the SDK turns into its usual `AccessDeniedException`.
 *
 * How it reaches every client without touching the handlers' bundles: the bundles leave
 * `@aws-sdk/*` out (the Lambda runtime provides it), so a handler's clients and this module
 * share the one `Client` class of `@smithy/core/client` in `node_modules`. Its `send` is
 * wrapped once per process; the wrapper adds a middleware to each client's stack the first
 * time it sends. The middleware sits innermost in the deserialize step, where the request is
 * built but not yet sent: it answers a refused call itself, so nothing reaches the service.
 * AWS calls sent with `fetch` (the AI SDK's Bedrock provider signs its own) are held by a wrapper
 * of the process's `fetch` (`fetch.ts`) to the same policy.
 *
 * Whose policy applies to a call: the process's (a Lambda worker runs one function), or the
 * one a client was bound to, or the one of the `runAs` scope the call runs in (an in-process
 * API or handler core). A call with none of these (the stack's own set-up) is not checked.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluate, type IamRequest } from './evaluate.ts';
import { enforcedFetch } from './fetch.ts';
import type { EnforcementSpec } from './policies.ts';
import { refusalMessage, refusalResponse } from './refusal.ts';
import { iamRequests } from './requests.ts';

/** A call IAM refused, as reported to `onRefused` listeners. */
export interface Refusal {
  functionName: string;
  clientName: string;
  commandName: string;
  request: IamRequest;
  message: string;
}

interface MiddlewareStack {
  add(middleware: unknown, options: Record<string, unknown>): void;
}
interface SmithyClient {
  middlewareStack: MiddlewareStack;
}
type Send = (this: SmithyClient, ...args: unknown[]) => unknown;
type Next = (args: { input: Record<string, unknown>; request?: unknown }) => Promise<unknown>;
interface HandlerContext {
  clientName?: string;
  commandName?: string;
}

/** The repository root: this file is `local/iam/enforce.ts`, or bundled into `.local/bundles/<x>.mjs`. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const scope = new AsyncLocalStorage<EnforcementSpec>();
const boundStacks = new WeakMap<object, EnforcementSpec>();
const patchedStacks = new WeakSet<object>();
let processSpec: EnforcementSpec | undefined;
let installed: number | undefined;
const listeners: ((refusal: Refusal) => void)[] = [];
const callListeners: ((call: { clientName: string; commandName: string }) => void)[] = [];

/** The spec a call is held to: the `runAs` scope's, the client's, or the process's. */
function specFor(stack: object): EnforcementSpec | undefined {
  return scope.getStore() ?? boundStacks.get(stack) ?? processSpec;
}

function iamMiddleware(stack: object) {
  return (next: Next, context: HandlerContext) =>
    async (args: { input: Record<string, unknown>; request?: unknown }): Promise<unknown> => {
      const clientName = context.clientName ?? 'UnknownClient';
      const commandName = context.commandName ?? 'UnknownCommand';
      // Each attempt of a call, as the service sees (and bills) it: the SDK's retries wrap this step.
      for (const listener of callListeners) {
        try {
          listener({ clientName, commandName });
        } catch {
          // A listener's failure must not change the call's outcome.
        }
      }
      const spec = specFor(stack);
      if (!spec) return next(args);
      for (const request of iamRequests(spec.facts, clientName, commandName, args.input ?? {})) {
        const decision = evaluate(spec.policy.statements, request);
        if (decision.allowed) continue;
        const message = refusalMessage(spec.policy.callerArn, request, decision.explicitDeny);
        for (const listener of listeners) {
          try {
            listener({ functionName: spec.policy.functionName, clientName, commandName, request, message });
          } catch {
            // A listener's failure must not change the call's outcome.
          }
        }
        return { response: refusalResponse(clientName, message) };
      }
      return next(args);
    };
}

/** Every distinct `@smithy/core/client` the installed AWS SDK packages resolve to. */
function smithyClientModules(): string[] {
  const sdkDir = join(REPO_ROOT, 'node_modules', '@aws-sdk');
  const packages = existsSync(sdkDir)
    ? readdirSync(sdkDir).filter((name) => name.startsWith('client-') || name === 'lib-dynamodb')
    : [];
  const found = new Set<string>();
  for (const name of packages) {
    const manifest = join(sdkDir, name, 'package.json');
    try {
      found.add(createRequire(manifest).resolve('@smithy/core/client'));
    } catch {
      // A package without @smithy/core (an old client) has no Client class of this kind.
    }
  }
  return [...found];
}

/**
 * Wraps `send` of every SDK `Client` class this process can load (idempotent). Returns how
 * many distinct classes were wrapped (one, with a deduplicated `node_modules`).
 *
 * @throws Error when no AWS SDK client package is installed
 */
export function installIamEnforcement(): number {
  if (installed !== undefined) return installed;
  const modules = smithyClientModules();
  if (modules.length === 0) throw new Error(`no AWS SDK client under ${join(REPO_ROOT, 'node_modules')}`);
  const load = createRequire(join(REPO_ROOT, 'package.json'));
  for (const file of modules) {
    const { Client } = load(file) as { Client: { prototype: { send: Send } } };
    const original = Client.prototype.send;
    Client.prototype.send = function send(this: SmithyClient, ...args: unknown[]) {
      const stack = this.middlewareStack;
      if (stack && !patchedStacks.has(stack)) {
        patchedStacks.add(stack);
        stack.add(iamMiddleware(stack), {
          step: 'deserialize',
          priority: 'low',
          name: 'belayLocalIamEnforcement',
          override: true,
        });
      }
      return original.apply(this, args);
    };
  }
  // The AI SDK's Bedrock provider signs and sends its own requests with fetch: held here too.
  const originalFetch = globalThis.fetch;
  globalThis.fetch = enforcedFetch(
    () => scope.getStore() ?? processSpec,
    originalFetch,
    (refusal) => {
      for (const listener of listeners) {
        try {
          listener({
            functionName: refusal.functionName,
            clientName: 'fetch',
            commandName: refusal.operation,
            request: refusal.request,
            message: refusal.message,
          });
        } catch {
          // A listener's failure must not change the call's outcome.
        }
      }
    },
  );
  installed = modules.length;
  return installed;
}

/** Holds every call of this process to `spec` (a Lambda worker: one function per process). */
export function enforceForProcess(spec: EnforcementSpec): void {
  installIamEnforcement();
  processSpec = spec;
}

/** Holds every call `client` makes to `spec`, wherever it is made from (an in-process API's clients). */
export function bindClient(client: { middlewareStack: object }, spec: EnforcementSpec): void {
  installIamEnforcement();
  boundStacks.set(client.middlewareStack, spec);
}

/** Runs `fn` with every SDK call it makes held to `spec` (an in-process handler core). */
export function runAs<T>(spec: EnforcementSpec, fn: () => T): T {
  installIamEnforcement();
  return scope.run(spec, fn);
}

/**
 * Tells `listener` of every AWS call this process sends (each attempt, allowed or refused, with
 * or without a policy); returns a function that stops it. A Lambda worker counts its calls
 * per invocation with it.
 */
export function onCall(listener: (call: { clientName: string; commandName: string }) => void): () => void {
  installIamEnforcement();
  callListeners.push(listener);
  return () => {
    const i = callListeners.indexOf(listener);
    if (i >= 0) callListeners.splice(i, 1);
  };
}

/** Tells `listener` of every refused call in this process; returns a function that stops it. */
export function onRefused(listener: (refusal: Refusal) => void): () => void {
  listeners.push(listener);
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  };
}
