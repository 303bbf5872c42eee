// An Anthropic `Message` (final, or a stream's snapshot) as the protocol's message. Shared by
// adapters/anthropic-sdk.mjs and anthropic-vertex-sdk.mjs (the same stream helper on Vertex):
// the SDK keeps raw stop reasons and Anthropic's own usage fields, so nothing to undo.
import { count, text, thinking, toolCall } from './protocol.mjs';

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
