// pi-ai's AssistantMessage as the protocol's message (stop values mapped by the conventions
// table). Shared by adapters/pi-ai.mjs and pi-ai-vertex.mjs.
import { text, thinking, toolCall } from './protocol.mjs';

/** pi's AssistantMessage as the protocol's message (stop values mapped by the conventions table). */
export function piMessage(m) {
  const content = [];
  for (const b of m.content ?? []) {
    if (b.type === 'text') content.push(text(b.text ?? '', b.textSignature ?? null));
    else if (b.type === 'thinking') content.push(thinking(b.thinking ?? '', b.thinkingSignature || null, Boolean(b.redacted)));
    else if (b.type === 'toolCall') content.push({ ...toolCall(b.id, b.name, b.arguments ?? {}), signature: b.thoughtSignature ?? null });
  }
  const u = m.usage;
  const failed = m.stopReason === 'error' || m.stopReason === 'aborted';
  return {
    content,
    stop_reason: failed ? null : (m.stopReason ?? null),
    usage: u ? { input: u.input ?? 0, output: u.output ?? 0, cache_read: u.cacheRead ?? 0, cache_write: u.cacheWrite ?? 0, total: u.totalTokens ?? null } : null,
    model: m.model || null,
    response_id: m.responseId || null,
    // pi never throws: an HTTP error or an error event ends in stopReason error with the
    // provider's message in errorMessage, surfaced here without a raise.
    error: failed ? (m.errorMessage || `stopReason ${m.stopReason}`) : null,
  };
}
