// Connects the official MCP TypeScript SDK's Client, over its
// StreamableHTTPClientTransport, to Warden's /mcp with a virtual key as a
// bearer token, lists the tools, makes the calls read from stdin, and
// prints one JSON document for web/mcp_interop_test.go:
//
//   echo '[{"name":"every__echo","arguments":{"message":"hi"}}]' | node client.mjs
//
// Environment: WARDEN_MCP_URL (…/mcp), WARDEN_KEY (wk_…).
// Output: {"server": {name, version}, "tools": [{name, description,
// inputSchema}], "calls": [{name, isError, text, content} or {name,
// error} when the client raised (a JSON-RPC error)]}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const s = Buffer.concat(chunks).toString('utf8').trim();
  return s ? JSON.parse(s) : [];
}

const calls = await readStdin();
const transport = new StreamableHTTPClientTransport(new URL(process.env.WARDEN_MCP_URL), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.WARDEN_KEY}` } },
});
const client = new Client({ name: 'warden-interop', version: '1.0.0' });
await client.connect(transport);

const out = { server: client.getServerVersion(), tools: [], calls: [] };
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  out.tools.push(...page.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })));
  cursor = page.nextCursor;
} while (cursor);

for (const c of calls) {
  try {
    const res = await client.callTool({ name: c.name, arguments: c.arguments ?? {} });
    const text = (res.content ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');
    out.calls.push({ name: c.name, isError: res.isError === true, text, content: res.content });
  } catch (e) {
    out.calls.push({ name: c.name, error: e instanceof Error ? e.message : String(e) });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
