// LangChain JS chat models: ChatAnthropic (@langchain/anthropic) and ChatOpenAI
// (@langchain/openai, Chat Completions and Responses), `model.stream('hi')` with the
// chunks joined by `concat`, as its users join them. Both nest their own SDK copies
// (@langchain/anthropic: @anthropic-ai/sdk 0.122.0); the client gets the replay fetch.
import { pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, text, thinking, toolCall, versions } from '../lib/protocol.mjs';

const { ChatAnthropic } = await import('@langchain/anthropic');
const { ChatOpenAI } = await import('@langchain/openai');
const int = (v) => (Number.isInteger(v) ? v : 0);

function model(protocol, fetch) {
  if (protocol === 'anthropic-messages') {
    return new ChatAnthropic({ apiKey: 'test', model: 'claude-harness', maxRetries: 0, clientOptions: { fetch, baseURL: 'http://harness.invalid' } });
  }
  return new ChatOpenAI({
    apiKey: 'test', model: 'gpt-harness', maxRetries: 0, streamUsage: true,
    useResponsesApi: protocol === 'openai-responses', configuration: { fetch, baseURL: 'http://harness.invalid/v1' },
  });
}

/** The joined AIMessageChunk as the protocol's message. */
function lcMessage(protocol, acc) {
  const content = [];
  if (typeof acc.content === 'string') {
    if (acc.content) content.push(text(acc.content));
  } else {
    for (const b of acc.content ?? []) {
      if (b.type === 'text' && b.text) content.push(text(b.text));
      else if (b.type === 'thinking') content.push(thinking(b.thinking ?? '', b.signature ?? null));
      else if (b.type === 'redacted_thinking') content.push(thinking('', b.data ?? null, true));
      else if (b.type === 'reasoning') content.push(thinking((b.summary ?? []).map((s) => s.text).filter(Boolean).join('\n\n') || b.reasoning || '', null));
    }
  }
  for (const c of acc.tool_calls ?? []) content.push(toolCall(c.id, c.name, c.args ?? {}));
  for (const c of acc.invalid_tool_calls ?? []) content.push(toolCall(c.id, c.name, c.args ?? ''));
  const md = acc.response_metadata ?? {};
  let stop = null;
  if (protocol === 'anthropic-messages') stop = acc.additional_kwargs?.stop_reason ?? md.stop_reason ?? null;
  else if (protocol === 'openai-completions') stop = md.finish_reason ?? null;
  else stop = md.status ? (md.incomplete_details?.reason ? `${md.status}/${md.incomplete_details.reason}` : md.status) : null;
  const u = acc.usage_metadata;
  return {
    content,
    stop_reason: stop,
    usage: u ? {
      input: int(u.input_tokens), output: int(u.output_tokens),
      cache_read: int(u.input_token_details?.cache_read), cache_write: int(u.input_token_details?.cache_creation),
      total: Number.isInteger(u.total_tokens) ? u.total_tokens : null,
    } : null,
    model: md.model_name ?? md.model ?? null,
    response_id: md.id ?? acc.id ?? null,
  };
}

await serveProtocol({
  implementation: {
    name: 'js-langchain', version: pkgVersion('@langchain/core'),
    libraries: versions({
      '@langchain/core': '@langchain/core', '@langchain/anthropic': '@langchain/anthropic', '@langchain/openai': '@langchain/openai',
      '@anthropic-ai/sdk (nested in @langchain/anthropic)': '@langchain/anthropic/node_modules/@anthropic-ai/sdk',
      openai: 'openai',
    }),
    homepage: 'https://github.com/langchain-ai/langchainjs', issues: 'https://github.com/langchain-ai/langchainjs/issues',
  },
  protocols: ['anthropic-messages', 'openai-completions', 'openai-responses'],
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0 };
    const llm = model(protocol, replayFetch(chunks, status, serveHeaders(status, headers), calls));
    let acc;
    try {
      for await (const c of await llm.stream('hi')) acc = acc ? acc.concat(c) : c;
    } catch (err) {
      const reply = { raised: raisedOf(err), requests: calls.n };
      if (acc) reply.message = lcMessage(protocol, acc);
      return reply;
    }
    return { message: lcMessage(protocol, acc ?? { content: '' }), requests: calls.n };
  },
});
