/**
 * A loopback model provider: Anthropic's Messages API on 127.0.0.1, deciding with Belay's local
 * rule-based policy. An agent step configured with an `anthropic:` model and this server's URL
 * (`BELAY_AGENT_ANTHROPIC_BASE_URL`) runs through the real provider SDK, the real prompts, the
 * forced tool call and the token and dollar accounting, with no network and no key: what a
 * hosted model costs a job can be measured offline (`npm run bench -- --sections agent
 * --agent-model anthropic:claude-haiku-4-5 --model-server`).
 *
 * The server reads the observation back from the user turn Belay sent (`userPrompt`,
 * `probeUserPrompt` in `lambdas/lib/agent/model-policy.ts`), so it sees only what a hosted model
 * sees. It answers with one `tool_use` block. Tokens are counted as a model would bill them,
 * roughly: the request's and the answer's characters divided by four. It is not a model, and says
 * so: every answer's `model` is the requested id with `-loopback` appended.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentAction } from '../lambdas/lib/agent/actions.ts';
import { localProbeAnswer, nextLocalAction } from '../lambdas/lib/agent/local-policy.ts';
import type { Observation, ProbeObservation } from '../lambdas/lib/agent/policy.ts';

/** Characters per token, the usual rough figure for English text and JSON. */
const CHARS_PER_TOKEN = 4;
/** The largest request body read (a page snapshot is trimmed well below this). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface ModelServer {
  /** The API's base URL, as the Anthropic SDK takes it (`http://127.0.0.1:<port>/v1`). */
  url: string;
  /** Calls answered with a tool call, and the tokens counted for them. */
  stats(): { calls: number; inputTokens: number; outputTokens: number };
  close(): Promise<void>;
}

/** Reads back the observation `userPrompt` wrote; undefined when the text is not one. */
export function parseUserPrompt(text: string): Observation | undefined {
  const page = /\nPage \(untrusted\) at (\S*):\n/.exec(text);
  if (!page || !text.startsWith('Goal: ')) return undefined;
  const head = text.slice(0, page.index).split('\n');
  const observation: Observation = {
    goal: head[0]?.slice('Goal: '.length) ?? '',
    fields: {},
    url: page[1] ?? '',
    snapshot: text.slice(page.index + page[0].length),
    history: [],
    answers: [],
  };
  const fields: Record<string, string> = {};
  const history: string[] = [];
  const answers: string[] = [];
  let section: 'fields' | 'history' | 'answers' | undefined;
  for (const line of head.slice(1)) {
    const healing = /^The recorded action "(.*)" no longer matches the page: choose it again\.$/.exec(line);
    if (healing) observation.healing = healing[1];
    else if (line === 'Fields:') section = 'fields';
    else if (line === 'Done so far:') section = 'history';
    else if (line === 'A person answered:') section = 'answers';
    else if (section === 'fields' && line.startsWith('- ')) {
      const at = line.indexOf(': ', 2);
      if (at > 0) fields[line.slice(2, at)] = line.slice(at + 2);
    } else if (section === 'history' && /^\d+\. /.test(line)) history.push(line.replace(/^\d+\. /, ''));
    else if (section === 'answers' && line.startsWith('- ')) answers.push(line.slice(2));
  }
  return { ...observation, fields, history, answers };
}

/** Reads back the observation `probeUserPrompt` wrote; undefined when the text is not one. */
export function parseProbePrompt(text: string): ProbeObservation | undefined {
  const m = /^Question: (.*)\nPage \(untrusted\) at (\S*):\n/.exec(text);
  if (!m) return undefined;
  return { question: m[1] ?? '', url: m[2] ?? '', snapshot: text.slice(m[0].length) };
}

const tokens = (chars: number): number => Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));

/** The user turn's text of a Messages request (a string, or its text blocks joined). */
function userText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
  const last = messages.filter((m) => m.role === 'user').at(-1);
  if (typeof last?.content === 'string') return last.content;
  if (!Array.isArray(last?.content)) return '';
  return (last.content as Record<string, unknown>[])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('');
}

function toolNames(body: Record<string, unknown>): string[] {
  return Array.isArray(body.tools) ? (body.tools as { name?: unknown }[]).map((t) => String(t.name)) : [];
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function refuse(res: ServerResponse, status: number, type: string, message: string): void {
  send(res, status, { type: 'error', error: { type, message } });
}

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Starts the server on a free loopback port.
 *
 * @param options.latencyMs how long each answer takes (a hosted model's think time), default 0
 * @example
 * const models = await startModelServer({ latencyMs: 800 });
 * env.BELAY_AGENT_ANTHROPIC_BASE_URL = models.url;
 */
export async function startModelServer(options: { latencyMs?: number } = {}): Promise<ModelServer> {
  const latencyMs = options.latencyMs ?? 0;
  const stats = { calls: 0, inputTokens: 0, outputTokens: 0 };
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || !req.url?.replace(/\?.*$/, '').endsWith('/messages')) {
        refuse(res, 404, 'not_found_error', 'only POST /v1/messages is served');
        return;
      }
      const raw = await readBody(req);
      if (raw === undefined) {
        refuse(res, 413, 'request_too_large', `the request is larger than ${MAX_BODY_BYTES} bytes`);
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        refuse(res, 400, 'invalid_request_error', 'the body is not JSON');
        return;
      }
      const text = userText(body);
      const tools = toolNames(body);
      let name: string;
      let input: Record<string, unknown>;
      if (tools.includes('answer_probe')) {
        const probe = parseProbePrompt(text);
        if (!probe) {
          refuse(res, 400, 'invalid_request_error', 'the user turn is not a probe question and a page');
          return;
        }
        name = 'answer_probe';
        input = { ...localProbeAnswer(probe) };
      } else {
        const observation = parseUserPrompt(text);
        if (!observation) {
          refuse(res, 400, 'invalid_request_error', 'the user turn is not a goal and a page');
          return;
        }
        const { name: action, ...args } = nextLocalAction(observation) as AgentAction;
        if (!tools.includes(action)) {
          refuse(res, 400, 'invalid_request_error', `the request offers no ${action} tool`);
          return;
        }
        name = action;
        input = args;
      }
      if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
      const usage = { input_tokens: tokens(raw.length), output_tokens: tokens(JSON.stringify(input).length) };
      stats.calls++;
      stats.inputTokens += usage.input_tokens;
      stats.outputTokens += usage.output_tokens;
      send(res, 200, {
        id: `msg_loopback_${stats.calls}`,
        type: 'message',
        role: 'assistant',
        model: `${String(body.model ?? 'model')}-loopback`,
        content: [{ type: 'tool_use', id: `toolu_loopback_${stats.calls}`, name, input }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage,
      });
    })().catch(() => {
      if (!res.headersSent) refuse(res, 500, 'api_error', 'the loopback model failed');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    stats: () => ({ ...stats }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
