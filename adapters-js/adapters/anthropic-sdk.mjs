// @anthropic-ai/sdk: `client.messages.stream(...)` then `finalMessage()`, as its users call it.
// Mapping: specs/adapters.md (section "JavaScript adapters"); the SDK keeps raw stop
// reasons and Anthropic's own usage fields, so no convention needs undoing.
import { count, pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, text, thinking, toolCall } from '../lib/protocol.mjs';

const { default: Anthropic } = await import('@anthropic-ai/sdk');

/** An Anthropic `Message` (or the stream's snapshot) as the protocol's message. */
export function anthropicMessage(m) {
  const content = [];
  for (const b of m.content ?? []) {
    if (b.type === 'text') content.push(text(b.text ?? ''));
    else if (b.type === 'thinking') content.push(thinking(b.thinking ?? '', b.signature || null));
    else if (b.type === 'redacted_thinking') content.push(thinking('', b.data ?? null, true));
    else if (b.type === 'tool_use') content.push(toolCall(b.id, b.name, typeof b.input === 'string' ? b.input : (b.input ?? {})));
  }
  const u = m.usage;
  return {
    content,
    stop_reason: m.stop_reason ?? null,
    usage: u ? { input: count(u.input_tokens), output: count(u.output_tokens), cache_read: count(u.cache_read_input_tokens), cache_write: count(u.cache_creation_input_tokens) } : null,
    model: m.model || null,
    response_id: m.id || null,
    // A refusal's explanation (`stop_details`), which the error message should carry.
    refusal: m.stop_details?.explanation ?? null,
  };
}

await serveProtocol({
  implementation: {
    name: 'js-anthropic-sdk', version: pkgVersion('@anthropic-ai/sdk'),
    libraries: { '@anthropic-ai/sdk': pkgVersion('@anthropic-ai/sdk') },
    homepage: 'https://github.com/anthropics/anthropic-sdk-typescript',
    issues: 'https://github.com/anthropics/anthropic-sdk-typescript/issues',
  },
  protocols: ['anthropic-messages'],
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0 };
    const client = new Anthropic({ apiKey: 'test', baseURL: 'http://harness.invalid', maxRetries: 0, fetch: replayFetch(chunks, status, serveHeaders(status, headers), calls) });
    let stream;
    try {
      stream = client.messages.stream({ model: 'claude-harness', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] });
      const final = await stream.finalMessage();
      return { message: anthropicMessage(final), requests: calls.n };
    } catch (err) {
      let snapshot = null;
      try { snapshot = stream?.currentMessage ?? null; } catch { snapshot = null; }
      const reply = { raised: raisedOf(err), requests: calls.n };
      if (snapshot) reply.message = anthropicMessage(snapshot);
      return reply;
    }
  },
});
