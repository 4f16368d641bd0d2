/**
 * The names of the MCP server's tools and the URIs of its resources: what the OpenAPI
 * document and the MCP guide name, in a file that loads nothing of the MCP SDK.
 */

/** Every tool, in the order `tools/list` gives them (the MCP guide's table is checked against the server). */
export const TOOL_NAMES = [
  'list_playbooks',
  'describe_playbook',
  'submit_job',
  'get_job',
  'wait_for_job',
  'list_jobs',
  'cancel_job',
  'answer_question',
  'answer_wait',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** URI (templates) of the resources. */
export const RESOURCE_URIS = {
  playbooks: 'belay://playbooks',
  timeline: 'belay://jobs/{jobId}/timeline',
  screenshot: 'belay://jobs/{jobId}/screenshots/{name}',
} as const;
