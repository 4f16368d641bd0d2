/**
 * AWS calls sent with `fetch` (the AI SDK's Bedrock provider signs its own) are held to the
 * caller's policy like SDK calls: refused with Bedrock's AccessDeniedException before anything is
 * sent, let through with the grant. Through the real AI SDK provider; no network.
 */
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { APICallError, generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { enforcedFetch } from '../../../local/iam/fetch.ts';
import type { EnforcementSpec } from '../../../local/iam/policies.ts';

const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const MODEL_ARN = `arn:aws:bedrock:us-east-1::foundation-model/${MODEL}`;

function spec(statements: EnforcementSpec['policy']['statements']): EnforcementSpec {
  return {
    policy: {
      constructId: 'RunStep',
      functionName: 'belay-run-step',
      callerArn: 'arn:aws:sts::000000000000:assumed-role/Belay-RunStepRole/belay-run-step',
      statements,
    },
    facts: { region: 'us-east-1', account: '000000000000', tables: {} },
  };
}

/** A fetch that records what reached it and answers nothing useful (there is no network here). */
function recorder(): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    fetch: async (input) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return new Response('{"message":"the test does not answer"}', { status: 500 });
    },
  };
}

const bedrockWith = (f: typeof fetch) =>
  createAmazonBedrock({
    region: 'us-east-1',
    accessKeyId: 'AKIDLOCALTEST',
    secretAccessKey: 'local',
    fetch: f,
  });

describe('Function: enforcedFetch', () => {
  it('refuses a Bedrock call through the AI SDK without its grant, as Bedrock does, sending nothing', async () => {
    const inner = recorder();
    const refusals: string[] = [];
    const f = enforcedFetch(
      () => spec([]),
      inner.fetch,
      (r) => refusals.push(r.request.action),
    );
    const err = await generateText({ model: bedrockWith(f)(MODEL), prompt: 'hi', maxRetries: 0 }).catch(
      (e: unknown) => e,
    );
    expect(APICallError.isInstance(err)).toBe(true);
    expect((err as APICallError).statusCode).toBe(403);
    expect((err as APICallError).message).toContain(
      `is not authorized to perform: bedrock:InvokeModel on resource: ${MODEL_ARN}`,
    );
    expect(inner.urls).toEqual([]);
    expect(refusals).toEqual(['bedrock:InvokeModel']);
  });

  it('lets the call through with the grant on the model', async () => {
    const inner = recorder();
    const f = enforcedFetch(
      () => spec([{ Effect: 'Allow', Action: ['bedrock:InvokeModel'], Resource: [MODEL_ARN] }]),
      inner.fetch,
    );
    await generateText({ model: bedrockWith(f)(MODEL), prompt: 'hi', maxRetries: 0 }).catch(() => undefined);
    expect(inner.urls).toHaveLength(1);
    expect(inner.urls[0]).toMatch(
      /^https:\/\/bedrock-runtime\.us-east-1\.amazonaws\.com\/model\/.+\/converse$/,
    );
  });

  it('leaves hosts that are not AWS alone, refuses an AWS endpoint it cannot map, checks nothing outside a scope', async () => {
    const inner = recorder();
    const f = enforcedFetch(() => spec([]), inner.fetch);
    await f('http://127.0.0.1:9/v1/messages', { method: 'POST' });
    expect(inner.urls).toEqual(['http://127.0.0.1:9/v1/messages']);
    expect((await f('https://sts.amazonaws.com/?Action=GetCallerIdentity')).status).toBe(403);
    expect(inner.urls).toHaveLength(1);
    await enforcedFetch(() => undefined, inner.fetch)('https://sts.amazonaws.com/');
    expect(inner.urls).toHaveLength(2);
  });
});
