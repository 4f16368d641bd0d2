import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { JobListSchema } from '../jobs/schemas.ts';
import { type ApiReply, type BelayApi, expectJson, failureOf, seg } from './api.ts';
import { RESOURCE_URIS } from './names.ts';
import { jobUris } from './views.ts';

/**
 * The resources of Belay's MCP server: the playbook catalogue, each job's timeline (its
 * ledger as the API shows it, redacted) and its screenshots (masked JPEGs, as image blobs).
 * Each read is the API's own route, for the caller's tenant; another tenant's job reads as
 * one that does not exist.
 */

/** A reply that is not a success, as the JSON-RPC error of a resource read (the API's message). */
function readFailed(reply: ApiReply): McpError {
  const failure = failureOf(reply);
  return new McpError(
    failure.status === 404 ? ErrorCode.InvalidParams : ErrorCode.InternalError,
    `${failure.message} (${failure.code}, HTTP ${failure.status})`,
    { status: failure.status, code: failure.code },
  );
}

async function json(api: BelayApi, path: string): Promise<string> {
  const reply = await api({ method: 'GET', path });
  if (reply.status !== 200 || reply.json === undefined) throw readFailed(reply);
  return JSON.stringify(reply.json);
}

/** A URI template variable, decoded (ids and names carry no reserved characters, but a client may encode them). */
function one(value: string | string[] | undefined): string {
  const raw = (Array.isArray(value) ? value[0] : value) ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Registers the catalogue, the timelines and the screenshots on `server`. */
export function registerResources(server: McpServer, api: BelayApi): void {
  server.registerResource(
    'playbooks',
    RESOURCE_URIS.playbooks,
    {
      title: 'Playbook catalogue',
      description: 'The playbooks this tenant may run, with their steps and inputs (JSON Schema).',
      mimeType: 'application/json',
    },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'application/json', text: await json(api, '/playbooks') }],
    }),
  );

  server.registerResource(
    'job-timeline',
    new ResourceTemplate(RESOURCE_URIS.timeline, {
      // The tenant's latest jobs, so a client can offer them without knowing an id.
      list: async () => {
        const reply = await api({ method: 'GET', path: '/jobs?limit=25' });
        const { jobs } = expectJson<z.infer<typeof JobListSchema>>(reply);
        return {
          resources: jobs.map((j) => ({
            uri: jobUris(j.jobId).timeline,
            name: `${j.jobId} (${j.playbook}, ${j.status})`,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      title: 'Job timeline',
      description:
        "A job's ledger, oldest first: every step started and verified (with evidence), every wait and who answered it, retries, sessions, screenshots; redacted.",
      mimeType: 'application/json',
    },
    async (uri, { jobId }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: await json(api, `/jobs/${seg(one(jobId))}/ledger`),
        },
      ],
    }),
  );

  server.registerResource(
    'job-screenshot',
    new ResourceTemplate(RESOURCE_URIS.screenshot, { list: undefined }),
    {
      title: 'Job screenshot',
      description:
        'A screenshot the job kept as evidence (after a write, before an approval or a review, on failure), sensitive fields masked. Its URI is in get_job and the timeline.',
      mimeType: 'image/jpeg',
    },
    async (uri, { jobId, name }) => {
      const reply = await api({
        method: 'GET',
        path: `/jobs/${seg(one(jobId))}/screenshots/${seg(one(name))}`,
      });
      if (reply.status !== 200 || reply.base64 === undefined) throw readFailed(reply);
      return { contents: [{ uri: uri.href, mimeType: reply.contentType, blob: reply.base64 }] };
    },
  );
}
