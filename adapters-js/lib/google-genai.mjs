// @google/genai's GenerateContentResponses joined as its users join them (the SDK has no
// accumulator), exactly as the Python google-genai adapter does
// (harness/stream_harness/adapters/sdks/google_genai.py, accumulate_parts). Shared by
// adapters/google-genai.mjs and google-genai-vertex.mjs (the same SDK with vertexai: true).
import { text, thinking, toolCall } from './protocol.mjs';

const int = (v) => (Number.isInteger(v) ? v : 0);

function addPart(part, content) {
  const signature = part.thoughtSignature ?? null;
  if (part.functionCall) {
    const call = part.functionCall;
    content.push({ ...toolCall(call.id || `${call.name}_${content.length}`, call.name, call.args ?? {}), signature });
    return;
  }
  if (typeof part.text === 'string') {
    const kind = part.thought ? 'thinking' : 'text';
    const last = content[content.length - 1];
    if (last && last.type === kind && !(last.signature && signature)) {
      last.content += part.text;
      last.signature = last.signature || signature;
    } else if (part.text || signature) {
      content.push(kind === 'thinking' ? thinking(part.text, signature) : text(part.text, signature));
    }
  }
}

/** The responses of one stream as the protocol's message. */
export function collect(responses) {
  const content = [];
  let stop = null; let usage = null; let model = null; let id = null; let details = null;
  for (const r of responses) {
    model = r.modelVersion || model;
    id = r.responseId || id;
    usage = r.usageMetadata || usage;
    if (r.promptFeedback?.blockReason) stop = r.promptFeedback.blockReason;
    const cand = (r.candidates ?? [])[0];
    if (cand) {
      if (cand.finishReason) stop = cand.finishReason;
      details = cand.finishMessage || details;
      for (const part of cand.content?.parts ?? []) addPart(part, content);
    }
  }
  return {
    content,
    stop_reason: stop,
    usage: usage ? {
      input: Math.max(0, int(usage.promptTokenCount) - int(usage.cachedContentTokenCount) + int(usage.toolUsePromptTokenCount)),
      output: int(usage.candidatesTokenCount), thinking: int(usage.thoughtsTokenCount), cache_read: int(usage.cachedContentTokenCount),
      total: Number.isInteger(usage.totalTokenCount) ? usage.totalTokenCount : null,
    } : null,
    model, response_id: id,
    // Why the candidate was stopped (Vertex's Model Armor, say), as the SDK keeps it.
    stop_details: details,
  };
}
