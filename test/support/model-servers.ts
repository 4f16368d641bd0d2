/**
 * Loopback servers speaking the model providers' wire formats (Anthropic Messages, OpenAI
 * Responses and Chat Completions, Bedrock Converse with a SigV4 check), answering from a script
 * and keeping every request, so tests drive the real provider SDKs with no network.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  rawBody: string;
}
export interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

export interface ModelServer {
  url: string;
  requests: Recorded[];
  /** Answers the next requests with these, in order (the last one repeats). */
  script(next: Scripted[]): void;
  /** Answers each request from what it holds (before the script; undefined: the script answers). */
  respond(with_: ((request: Recorded) => Scripted | undefined) | undefined): void;
  close(): Promise<void>;
}

export async function startModelServer(): Promise<ModelServer> {
  const requests: Recorded[] = [];
  let queue: Scripted[] = [];
  let responder: ((request: Recorded) => Scripted | undefined) | undefined;
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      raw += c;
    });
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        // not JSON: kept raw
      }
      const recorded: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        rawBody: raw,
      };
      requests.push(recorded);
      let answered: Scripted | undefined;
      try {
        answered = responder?.(recorded);
      } catch (err) {
        answered = { status: 500, body: { message: `the responder threw: ${String(err)}` } };
      }
      const next = answered ??
        (queue.length > 1 ? queue.shift() : queue[0]) ?? {
          status: 500,
          body: { message: 'no script' },
        };
      res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers });
      res.end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (next) => {
      queue = [...next];
    },
    respond: (with_) => {
      responder = with_;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Each provider's answer with one tool call, and its error body. */
export const WIRE = {
  anthropic: {
    /** An answer with text only, no tool call (a model that talks instead of acting, or refuses), and its usage. */
    text: (
      text: string,
      stopReason = 'end_turn',
      usage = { input_tokens: 400, output_tokens: 12 },
    ): Scripted => ({
      status: 200,
      body: {
        id: 'msg_02',
        type: 'message',
        role: 'assistant',
        model: 'claude-haiku-4-5',
        content: [{ type: 'text', text }],
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      },
    }),
    call: (name: string, input: object, model = 'claude-haiku-4-5'): Scripted => ({
      status: 200,
      body: {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'tool_use', id: 'toolu_01', name, input }],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 321, output_tokens: 17 },
      },
    }),
    error: (status: number, type: string, headers: Record<string, string> = {}): Scripted => ({
      status,
      headers,
      body: { type: 'error', error: { type, message: `scripted ${type}` } },
    }),
  },
  openaiResponses: {
    call: (name: string, args: object, model = 'gpt-5-mini'): Scripted => ({
      status: 200,
      body: {
        id: 'resp_01',
        object: 'response',
        created_at: 1700000000,
        status: 'completed',
        model,
        output: [
          {
            type: 'function_call',
            id: 'fc_01',
            call_id: 'call_01',
            name,
            arguments: JSON.stringify(args),
            status: 'completed',
          },
        ],
        usage: { input_tokens: 321, output_tokens: 17, total_tokens: 338 },
      },
    }),
  },
  openaiChat: {
    call: (name: string, args: object, model = 'gpt-5-mini'): Scripted => ({
      status: 200,
      body: {
        id: 'chatcmpl-01',
        object: 'chat.completion',
        created: 1700000000,
        model,
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_01', type: 'function', function: { name, arguments: JSON.stringify(args) } },
              ],
            },
          },
        ],
        usage: { prompt_tokens: 321, completion_tokens: 17, total_tokens: 338 },
      },
    }),
  },
  openai: {
    error: (status: number, type: string, headers: Record<string, string> = {}): Scripted => ({
      status,
      headers,
      body: { error: { message: `scripted ${type}`, type, param: null, code: type } },
    }),
  },
  bedrock: {
    call: (name: string, input: object): Scripted => ({
      status: 200,
      body: {
        output: {
          message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_01', name, input } }] },
        },
        stopReason: 'tool_use',
        usage: { inputTokens: 321, outputTokens: 17, totalTokens: 338 },
        metrics: { latencyMs: 5 },
      },
    }),
    error: (status: number, type: string, headers: Record<string, string> = {}): Scripted => ({
      status,
      headers: {
        'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
        ...headers,
      },
      body: { message: `scripted ${type}` },
    }),
  },
};

/** Recomputes a Bedrock request's SigV4 signature with node:crypto: whether it matches the secret key. */
export function sigV4Matches(
  r: Recorded,
  secretAccessKey: string,
): { ok: boolean; region: string; service: string } {
  const auth = String(r.headers.authorization ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return { ok: false, region: '', service: '' };
  const [, , date = '', region = '', service = '', sh = '', signature = ''] = m;
  const url = new URL(r.path, 'http://x');
  const canonicalUri = url.pathname
    .split('/')
    .map((s) =>
      encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join('/');
  const canonicalHeaders = sh
    .split(';')
    .map((h) => `${h}:${String(r.headers[h]).trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const payloadHash = createHash('sha256').update(r.rawBody).digest('hex');
  const canonical = [
    'POST',
    canonicalUri,
    url.searchParams.toString(),
    canonicalHeaders,
    sh,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = [
    'AWS4-HMAC-SHA256',
    String(r.headers['x-amz-date']),
    scope,
    createHash('sha256').update(canonical).digest('hex'),
  ].join('\n');
  const hmac = (k: Buffer | string, s: string): Buffer => createHmac('sha256', k).update(s).digest();
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request');
  return { ok: createHmac('sha256', kSigning).update(toSign).digest('hex') === signature, region, service };
}
