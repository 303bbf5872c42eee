// openai (node): `chat.completions.stream(...)` then `finalChatCompletion()`, and
// `responses.stream(...)` then `finalResponse()`, as their users call them. The mapping
// mirrors the Python openai-sdk adapter (specs/adapters.md), so the two SDKs' rows compare.
import { count, pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, text, thinking, toolCall } from '../lib/protocol.mjs';
import { responsesMessage } from '../lib/openai-responses.mjs';

const { default: OpenAI } = await import('openai');

const int = (v) => (Number.isInteger(v) ? v : 0);

/** A ChatCompletion (or the stream's snapshot) as the protocol's message. */
export function chatMessage(c) {
  const choices = c.choices ?? [];
  const first = choices.find((x) => (x.index ?? 0) === 0) ?? choices[0];
  const content = [];
  let refusal = null;
  let stop = null;
  if (first) {
    const m = first.message ?? {};
    stop = first.finish_reason ?? null;
    for (const f of ['reasoning_content', 'reasoning', 'reasoning_text']) {
      if (typeof m[f] === 'string' && m[f]) { content.push(thinking(m[f])); break; }
    }
    if (typeof m.content === 'string' && m.content) content.push(text(m.content));
    if (m.refusal) { refusal = m.refusal; content.push(text(m.refusal)); }
    for (const call of m.tool_calls ?? []) {
      const id = call.id || `toolcall_${content.length}`;
      if (call.type === 'custom' && call.custom) content.push(toolCall(id, call.custom.name, { input: call.custom.input }));
      else {
        const args = call.function?.arguments;
        content.push(toolCall(id, call.function?.name, args == null ? '' : (typeof args === 'string' ? args : JSON.stringify(args))));
      }
    }
  }
  const u = c.usage;
  let usage = null;
  if (u) {
    const cacheRead = int(u.prompt_tokens_details?.cached_tokens) || int(u.prompt_cache_hit_tokens) || int(u.cached_tokens);
    const cacheWrite = int(u.prompt_tokens_details?.cache_write_tokens);
    const counts = { input: Math.max(0, int(u.prompt_tokens) - cacheRead - cacheWrite), output: count(u.completion_tokens), cache_read: count(cacheRead), cache_write: count(cacheWrite) };
    usage = { ...counts, total: Number.isInteger(u.total_tokens) ? u.total_tokens : null };
  }
  return { content, stop_reason: stop, usage, model: c.model || null, response_id: c.id || null, refusal };
}

function client(chunks, status, headers, calls) {
  return new OpenAI({ apiKey: 'sk-test', baseURL: 'http://harness.invalid/v1', maxRetries: 0, fetch: replayFetch(chunks, status, serveHeaders(status, headers), calls) });
}

async function chat(chunks, status, headers) {
  const calls = { n: 0 };
  let stream;
  try {
    stream = client(chunks, status, headers, calls).chat.completions.stream({ model: 'gpt-harness', messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalChatCompletion();
    return { message: chatMessage(final), requests: calls.n };
  } catch (err) {
    const reply = { raised: raisedOf(err), requests: calls.n };
    let snapshot = null;
    try { snapshot = stream?.currentChatCompletionSnapshot ?? null; } catch { snapshot = null; }
    if (snapshot) reply.message = chatMessage(snapshot);
    return reply;
  }
}

const TERMINAL = new Set(['response.incomplete', 'response.failed', 'response.cancelled']);

async function responses(chunks, status, headers) {
  const calls = { n: 0 };
  let terminal = null;
  let errorEvent = null;
  try {
    const stream = client(chunks, status, headers, calls).responses.stream({ model: 'gpt-harness', input: 'hi' });
    for await (const event of stream) {
      if (terminal || errorEvent) continue;
      if (TERMINAL.has(event.type)) terminal = event.response;
      else if (event.type === 'error') errorEvent = event;
    }
    const final = await stream.finalResponse();
    return { message: responsesMessage(final), requests: calls.n };
  } catch (err) {
    const reply = { raised: raisedOf(err, errorEvent?.message ?? undefined), requests: calls.n };
    if (terminal && !errorEvent) reply.message = responsesMessage(terminal);
    return reply;
  }
}

await serveProtocol({
  implementation: {
    name: 'js-openai', version: pkgVersion('openai'), libraries: { openai: pkgVersion('openai') },
    homepage: 'https://github.com/openai/openai-node', issues: 'https://github.com/openai/openai-node/issues',
  },
  protocols: ['openai-completions', 'openai-responses'],
  run: (protocol, chunks, status, headers) => (protocol === 'openai-completions' ? chat : responses)(chunks, status, headers),
});
