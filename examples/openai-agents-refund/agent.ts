// A refund agent on the OpenAI Agents SDK with Warden as its model
// endpoint and its approver: every model call goes through Warden's
// OpenAI-compatible gateway under a virtual key (budget, rate limits,
// redacted traces), and the refund tool does not refund by itself: it asks
// Warden (POST /v1/actions) and reports what the approvers decided.
//
//   WARDEN_KEY=wk_... npx tsx agent.ts "Refund ORD-1008, the laptop arrived broken"
//
// Settings (environment):
//   WARDEN_URL              Warden's address (default http://127.0.0.1:8080)
//   WARDEN_KEY              a virtual key with model:<alias> and tool:issue_refund
//   WARDEN_MODEL            the model alias (default demo-model)
//   WARDEN_APPROVAL_TIMEOUT seconds to wait for the approvers (default 600);
//                           a refund still pending then is withdrawn
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';

const wardenURL = (process.env.WARDEN_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
const key = process.env.WARDEN_KEY ?? '';
const alias = process.env.WARDEN_MODEL ?? 'demo-model';
const approvalTimeoutMs = Number(process.env.WARDEN_APPROVAL_TIMEOUT ?? '600') * 1000;
if (!key.startsWith('wk_')) {
  console.error('Set WARDEN_KEY to a Warden virtual key (wk_...).');
  process.exit(2);
}

// The SDK's own traces would be exported to OpenAI's platform with this
// key; Warden keeps the traces of the model calls instead.
setTracingDisabled(true);

// Warden serves Chat Completions, not the Responses API (the SDK's
// default), so the agent gets a Chat Completions model on Warden's URL.
const client = new OpenAI({ baseURL: `${wardenURL}/v1`, apiKey: key, maxRetries: 2 });
const model = new OpenAIChatCompletionsModel(client, alias);

// orders stands in for your order system: a few of the dev demo's orders,
// as Warden's simulated payment provider knows them.
const orders: Record<string, { status: string; amount_minor: number; currency: string; account_last4: string; items: string[] }> = {
  'ORD-1003': { status: 'shipped', amount_minor: 89900, currency: 'USD', account_last4: '8836', items: ['Espresso machine'] },
  'ORD-1006': { status: 'placed', amount_minor: 31000, currency: 'USD', account_last4: '4627', items: ['Hiking boots'] },
  'ORD-1008': { status: 'packed', amount_minor: 124900, currency: 'USD', account_last4: '6343', items: ['Laptop'] },
  'ORD-1010': { status: 'placed', amount_minor: 56040, currency: 'USD', account_last4: '8870', items: ['Dining chair x4'] },
};

const lookupOrder = tool({
  name: 'lookup_order',
  description: 'Look an order up: its status, what was paid, in which currency, and the last four characters of the payment account.',
  parameters: z.object({ order_id: z.string().describe('The order, such as ORD-1008.') }),
  execute: async ({ order_id }) => {
    const o = orders[order_id.trim().toUpperCase()];
    return JSON.stringify(o ? { order_id: order_id.trim().toUpperCase(), ...o } : { error: `no order ${order_id}` });
  },
});

type Action = { id: string; status: string; summary?: string; approvals_required?: number; approvals_given?: number; receipt?: unknown; failure?: string };

// warden calls Warden's agents' API with the key; a non-2xx answer throws
// with Warden's error code and message.
async function warden(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Action> {
  const res = await fetch(`${wardenURL}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) {
    let err = text;
    try {
      const e = JSON.parse(text).error;
      err = `${e.code}: ${e.message}`;
    } catch {}
    throw new Error(`Warden answered ${res.status} (${err})`);
  }
  return JSON.parse(text) as Action;
}

const done = new Set(['executed', 'rejected', 'expired', 'cancelled', 'failed']);

function money(minor: number, currency: string): string {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(minor / 100);
}

const refund = tool({
  name: 'refund',
  description:
    'Refund an order to its payment account. Warden asks people to approve it first; the answer says whether it was executed (with the receipt), rejected or expired.',
  parameters: z.object({
    order_id: z.string().describe('The order, such as ORD-1008.'),
    amount_minor: z.number().int().positive().describe('The amount in minor units (cents).'),
    currency: z.string().describe('ISO 4217 code, such as USD.'),
    account: z.string().describe("The last four characters of the order's payment account."),
    reason: z.string().describe('Why, in the words of the request.'),
  }),
  execute: async ({ order_id, amount_minor, currency, account, reason }) => {
    let action: Action;
    try {
      // One Idempotency-Key per refund: a retried proposal is the same action.
      action = await warden(
        'POST',
        '/v1/actions',
        {
          tool: 'issue_refund',
          arguments: { order_id, amount_minor, currency, account },
          summary: `Refund ${money(amount_minor, currency)} for ${order_id}`,
          reason,
          amount: amount_minor,
          currency,
        },
        { 'Idempotency-Key': randomUUID() },
      );
    } catch (e) {
      return JSON.stringify({ status: 'refused', error: String((e as Error).message) });
    }
    console.log(`Warden action ${action.id} is ${action.status}: ${action.approvals_required} approval(s) needed at ${wardenURL}/approvals/${action.id}`);
    const deadline = Date.now() + approvalTimeoutMs;
    while (!done.has(action.status)) {
      const left = deadline - Date.now();
      if (left <= 0 && action.status === 'pending') {
        // Nobody decided in time: withdraw it, so it cannot run later
        // without the agent knowing. A decision that came first wins.
        try {
          action = await warden('POST', `/v1/actions/${action.id}/cancel`);
        } catch {
          action = await warden('GET', `/v1/actions/${action.id}`);
        }
        continue;
      }
      const before = action.status;
      if (before === 'pending') {
        // Long-poll: Warden answers as soon as the action leaves pending.
        const wait = Math.max(1, Math.min(30, Math.ceil(left / 1000)));
        action = await warden('GET', `/v1/actions/${action.id}?wait=${wait}s`);
      } else {
        // Approved: Warden is executing it; the wait only covers pending.
        await new Promise((r) => setTimeout(r, 250));
        action = await warden('GET', `/v1/actions/${action.id}`);
      }
      if (action.status !== before && !done.has(action.status)) {
        console.log(`Warden action ${action.id} is ${action.status}`);
      }
    }
    console.log(`Warden action ${action.id} ended ${action.status}`);
    return JSON.stringify({ action_id: action.id, status: action.status, receipt: action.receipt, failure: action.failure });
  },
});

const agent = new Agent({
  name: 'Refund agent',
  instructions:
    'You handle refund requests. Look the order up first, then refund what the customer paid, to the payment account the lookup names. ' +
    'Report the outcome exactly as the refund tool gave it: executed (with the refund id), rejected, expired or refused.',
  model,
  tools: [lookupOrder, refund],
});

const request = process.argv.slice(2).join(' ') || 'Refund order ORD-1008: the laptop arrived with a cracked screen.';
try {
  const result = await run(agent, request, { maxTurns: 6 });
  console.log(result.finalOutput);
} catch (e) {
  console.error(`The agent stopped: ${(e as Error).message}`);
  process.exit(1);
}
