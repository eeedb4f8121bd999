// Drives one official OpenAI-compatible client, at its default settings
// (pointed at Warden by base URL and key alone), through one scenario and
// prints what happened as one JSON line for web/sdk_clients_test.go:
//
//   node clients.mjs CLIENT [SCENARIO...]
//
// CLIENT:   openai-chat, openai-responses, agents, aisdk-responses
//           (openai(id)), aisdk-chat (openai.chat(id)), aisdk-compatible,
//           langchain-chat, langchain-responses (useResponsesApi)
// SCENARIO: answer (plain), stream (streamed), tool (a tool round trip),
//           error (a call Warden refuses with 402, WARDEN_POOR_KEY: the
//           client must raise), cut (WARDEN_CUT_MODEL's upstream breaks
//           the stream: the client must raise); all five by default, in
//           turn, one line each
//
// Environment: WARDEN_BASE_URL (…/v1), WARDEN_KEY, WARDEN_MODEL,
// WARDEN_POOR_KEY, WARDEN_CUT_MODEL.
// Output: {"scenario":…,"ok":true,"text":…,"input_tokens":…,"output_tokens":…,"tool_calls":N}
// or {"scenario":…,"ok":false,"status":…,"error":…} when the client raised.
import OpenAI from 'openai';
import { Agent, Runner, OpenAIProvider, tool as agentTool, setTracingDisabled } from '@openai/agents';
import { generateText, streamText, tool as aiTool, stepCountIs } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { z } from 'zod';

const [client, ...asked] = process.argv.slice(2);
const scenarios = asked.length ? asked : ['answer', 'stream', 'tool', 'error', 'cut'];
const baseURL = process.env.WARDEN_BASE_URL;
const prompt = 'where is order ORD-1001';
// Set for each scenario in turn (they run one after another).
let scenario, apiKey, model, streamed;
// The tool every scenario "tool" offers: the fake upstream calls the first
// tool offered with {"query": the user's message}, then answers
// "tool said: " and the tool's result.
const lookup = (query) => `ORD-1001 shipped (${query.length} chars asked)`;
const lookupSchema = z.object({ query: z.string() });
const lookupJSON = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false };
let toolCalls;

function out(o) {
  process.stdout.write(JSON.stringify(o) + '\n');
}

async function openaiChat() {
  const c = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  const messages = [{ role: 'user', content: prompt }];
  if (scenario === 'tool') {
    const tools = [{ type: 'function', function: { name: 'lookup', description: 'Look an order up', parameters: lookupJSON } }];
    const first = await c.chat.completions.create({ model, messages, tools });
    const call = first.choices[0].message.tool_calls[0];
    toolCalls++;
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: lookup(JSON.parse(call.function.arguments).query) });
    const r = await c.chat.completions.create({ model, messages, tools });
    return { text: r.choices[0].message.content, input_tokens: r.usage.prompt_tokens, output_tokens: r.usage.completion_tokens };
  }
  if (streamed) {
    const s = await c.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
    let text = '', usage = {};
    for await (const chunk of s) {
      text += chunk.choices?.[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    return { text, input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens };
  }
  const r = await c.chat.completions.create({ model, messages });
  return { text: r.choices[0].message.content, input_tokens: r.usage.prompt_tokens, output_tokens: r.usage.completion_tokens };
}

async function openaiResponses() {
  const c = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  if (scenario === 'tool') {
    const tools = [{ type: 'function', name: 'lookup', description: 'Look an order up', parameters: lookupJSON, strict: true }];
    const first = await c.responses.create({ model, input: prompt, tools });
    const call = first.output.find((o) => o.type === 'function_call');
    toolCalls++;
    const r = await c.responses.create({
      model, tools, previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: lookup(JSON.parse(call.arguments).query) }],
    });
    return { text: r.output_text, input_tokens: r.usage.input_tokens, output_tokens: r.usage.output_tokens };
  }
  if (streamed) {
    const s = await c.responses.create({ model, input: prompt, stream: true });
    let text = '', usage = {};
    for await (const ev of s) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') usage = ev.response.usage;
    }
    return { text, input_tokens: usage.input_tokens, output_tokens: usage.output_tokens };
  }
  const r = await c.responses.create({ model, input: prompt });
  return { text: r.output_text, input_tokens: r.usage.input_tokens, output_tokens: r.usage.output_tokens };
}

async function agents() {
  setTracingDisabled(true);
  // The SDK's defaults: the Responses API, through the provider's own
  // OpenAI client; only the base URL and key are Warden's.
  const runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey, baseURL }), tracingDisabled: true });
  const tools = scenario === 'tool'
    ? [agentTool({ name: 'lookup', description: 'Look an order up', parameters: lookupSchema, execute: async ({ query }) => { toolCalls++; return lookup(query); } })]
    : [];
  const agent = new Agent({ name: 'support', instructions: 'Answer the customer.', model, tools });
  if (streamed || scenario === 'tool') {
    const r = await runner.run(agent, prompt, { stream: true });
    let text = '';
    for await (const ev of r.toTextStream()) text += ev;
    await r.completed;
    if (r.error) throw r.error;
    const u = r.state.usage;
    return { text: r.finalOutput ?? text, streamed_text: text, input_tokens: u.inputTokens, output_tokens: u.outputTokens };
  }
  const r = await runner.run(agent, prompt);
  const u = r.state.usage;
  return { text: r.finalOutput, input_tokens: u.inputTokens, output_tokens: u.outputTokens };
}

async function aisdk(kind) {
  let m;
  if (kind === 'compatible') {
    m = createOpenAICompatible({ name: 'warden', baseURL, apiKey, includeUsage: true }).chatModel(model);
  } else {
    const p = createOpenAI({ baseURL, apiKey });
    m = kind === 'chat' ? p.chat(model) : p(model);
  }
  const tools = scenario === 'tool'
    ? { lookup: aiTool({ description: 'Look an order up', inputSchema: lookupSchema, execute: async ({ query }) => { toolCalls++; return lookup(query); } }) }
    : undefined;
  if (streamed) {
    const s = streamText({ model: m, prompt, maxRetries: 0, onError: () => {} });
    let text = '';
    // The AI SDK reports a broken stream as an error part of the stream
    // (and a finish reason of "error"); either is it raising.
    for await (const part of s.fullStream) {
      if (part.type === 'text-delta') text += part.text;
      if (part.type === 'error') throw part.error;
    }
    const finish = await s.finishReason;
    if (finish === 'error' || finish === 'other' || finish === 'unknown') throw new Error('stream finished with reason ' + finish);
    const u = await s.usage;
    return { text, input_tokens: u.inputTokens, output_tokens: u.outputTokens };
  }
  const r = await generateText({ model: m, prompt, tools, stopWhen: stepCountIs(3), maxRetries: 0 });
  return { text: r.text, input_tokens: r.totalUsage.inputTokens, output_tokens: r.totalUsage.outputTokens };
}

async function langchain(responses) {
  const m = new ChatOpenAI({ model, apiKey, configuration: { baseURL }, maxRetries: 0, ...(responses ? { useResponsesApi: true } : {}) });
  const text = (msg) => (typeof msg.content === 'string' ? msg.content : msg.content.map((p) => p.text ?? '').join(''));
  if (scenario === 'tool') {
    const bound = m.bindTools([{ type: 'function', function: { name: 'lookup', description: 'Look an order up', parameters: lookupJSON } }]);
    const messages = [new HumanMessage(prompt)];
    const first = await bound.invoke(messages);
    const call = first.tool_calls[0];
    toolCalls++;
    messages.push(first, new ToolMessage({ tool_call_id: call.id, content: lookup(call.args.query) }));
    const r = await bound.invoke(messages);
    return { text: text(r), input_tokens: r.usage_metadata?.input_tokens, output_tokens: r.usage_metadata?.output_tokens };
  }
  if (streamed) {
    let all = '', usage = {};
    for await (const chunk of await m.stream(prompt, { stream_options: { include_usage: true } })) {
      all += text(chunk);
      if (chunk.usage_metadata) usage = chunk.usage_metadata;
    }
    return { text: all, input_tokens: usage.input_tokens, output_tokens: usage.output_tokens };
  }
  const r = await m.invoke(prompt);
  return { text: text(r), input_tokens: r.usage_metadata?.input_tokens, output_tokens: r.usage_metadata?.output_tokens };
}

const clients = {
  'openai-chat': openaiChat,
  'openai-responses': openaiResponses,
  agents,
  'aisdk-responses': () => aisdk('responses'),
  'aisdk-chat': () => aisdk('chat'),
  'aisdk-compatible': () => aisdk('compatible'),
  'langchain-chat': () => langchain(false),
  'langchain-responses': () => langchain(true),
};

const run = clients[client];
if (!run) {
  out({ ok: false, error: 'unknown client ' + client });
  process.exit(2);
}
for (const sc of scenarios) {
  scenario = sc;
  streamed = sc === 'stream' || sc === 'cut';
  apiKey = sc === 'error' ? process.env.WARDEN_POOR_KEY : process.env.WARDEN_KEY;
  model = sc === 'cut' ? process.env.WARDEN_CUT_MODEL : process.env.WARDEN_MODEL;
  toolCalls = 0;
  try {
    const r = await run();
    out({ scenario: sc, ok: true, tool_calls: toolCalls, ...r });
  } catch (e) {
    const status = e?.status ?? e?.statusCode ?? e?.response?.status ?? e?.cause?.status ?? e?.lastError?.statusCode ?? 0;
    out({ scenario: sc, ok: false, status, error: String(e?.message ?? e).slice(0, 500) });
  }
}
