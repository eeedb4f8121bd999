// A refund agent on the OpenAI Agents SDK whose tools come from an MCP
// server reached through Warden's /mcp door, and whose model is Warden's
// model gateway. Warden decides every tool call: a low-impact one
// (shop__lookup_order) is forwarded at once; a high-impact one
// (shop__issue_refund) waits, with the HTTP request held open, until people
// approve it in Warden's console, and only then reaches the shop.
//
//   WARDEN_KEY=wk_... npx tsx agent.ts "Refund ORD-1008, the laptop arrived broken"
//
// Settings (environment):
//   WARDEN_URL              Warden's address (default http://127.0.0.1:8080)
//   WARDEN_KEY              a virtual key with model:<alias> and mcp:shop/*
//   WARDEN_MODEL            the model alias (default refund-agent)
//   WARDEN_APPROVAL_TIMEOUT seconds a tool call may wait for its approvers
//                           (default 600)
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { Agent, MCPServerStreamableHttp, OpenAIChatCompletionsModel, run, setTracingDisabled } from '@openai/agents';

const wardenURL = (process.env.WARDEN_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const key = process.env.WARDEN_KEY ?? '';
const alias = process.env.WARDEN_MODEL ?? 'refund-agent';
const approvalTimeoutMs = Number(process.env.WARDEN_APPROVAL_TIMEOUT ?? '600') * 1000;
if (!key.startsWith('wk_')) {
  console.error('Set WARDEN_KEY to a Warden virtual key (wk_...).');
  process.exit(2);
}

// The SDK's own traces would be exported to OpenAI's platform with this
// key; Warden keeps the traces of the model calls and the audit of the
// tool calls instead.
setTracingDisabled(true);

// The model: Warden's Chat Completions door, with the same key.
const client = new OpenAI({ baseURL: `${wardenURL}/v1`, apiKey: key, maxRetries: 2 });
const model = new OpenAIChatCompletionsModel(client, alias);

// watchProgress passes Warden's answers through unchanged and prints the
// MCP progress notifications in them: while a high-impact call waits for
// approval, Warden says so, with the action's page in its console.
const decoder = new TextDecoder();
function watchProgress(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  let pending = '';
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        pending += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          if (!line.startsWith('data:')) continue;
          try {
            const msg = JSON.parse(line.slice(5));
            if (msg.method === 'notifications/progress' && msg.params?.message) {
              console.log(`Warden: ${msg.params.message}`);
            }
          } catch {}
        }
        out.enqueue(chunk);
      },
    }),
  );
}

const progressFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if (!res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res;
  return new Response(watchProgress(res.body), { status: res.status, statusText: res.statusText, headers: res.headers });
};

// The tools: every tool the key's mcp: scopes allow, named SERVER__TOOL.
const warden = new MCPServerStreamableHttp({
  name: 'warden',
  url: `${wardenURL}/mcp`,
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
  fetch: progressFetch,
  // A high-impact call is answered only once it is approved and executed
  // (or rejected, or expired): the client waits that long.
  timeout: approvalTimeoutMs,
  cacheToolsList: true,
  // A progress token asks Warden to report, while a call waits for its
  // approvers, what it waits for. The notifications also keep the HTTP
  // response moving: Node's fetch gives up on an answer whose first byte
  // takes more than five minutes.
  toolMetaResolver: () => ({ progressToken: `refund-${randomUUID()}` }),
});

const agent = new Agent({
  name: 'Refund agent',
  instructions:
    "You handle refund requests. Look the order up first with the shop's lookup_order tool, then refund what the customer paid with its issue_refund tool " +
    '(amount in minor units, in the order\'s currency). Report the outcome exactly as the refund tool gave it: the refund, or why it was refused or rejected.',
  model,
  mcpServers: [warden],
});

const request = process.argv.slice(2).join(' ') || 'Refund order ORD-1008: the laptop arrived with a cracked screen.';
let code = 0;
try {
  await warden.connect();
  const tools = await warden.listTools();
  console.log(`Tools through Warden: ${tools.map((t) => t.name).join(', ') || '(none: check the key\'s mcp: scopes)'}`);
  const result = await run(agent, request, { maxTurns: 6 });
  console.log(result.finalOutput);
} catch (e) {
  console.error(`The agent stopped: ${(e as Error).message}`);
  code = 1;
} finally {
  await warden.close();
}
process.exit(code);
