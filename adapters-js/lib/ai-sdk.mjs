// The Vercel AI SDK: `streamText({model, prompt})` iterated to the end, its parts read into
// the protocol's message. Shared by adapters/ai-sdk.mjs (the first-party providers) and
// adapters/ai-sdk-openai-compatible.mjs. Conventions undone in Python
// (specs/adapter_conventions.yaml, js-ai-sdk): its usage arithmetic; tool calls arrive
// without declared tools as `dynamic`/`invalid` calls whose input is kept as given.
import { count, providerMessage, raisedOf, replayFetch, serveHeaders, text, thinking, toolCall } from './protocol.mjs';

globalThis.AI_SDK_LOG_WARNINGS = false;
const { streamText } = await import('ai');

// Unified values that stand for a wire value when the provider kept no raw one (OpenAI
// Responses' `completed`); mapped back by specs/adapter_conventions.yaml. `error`,
// `interrupted` and `other` stand for no wire value.
const UNIFIED = new Set(['stop', 'tool-calls', 'length', 'content-filter']);

function stopOf(finish) {
  if (!finish) return null;
  if (finish.rawFinishReason != null) return finish.rawFinishReason;
  return UNIFIED.has(finish.finishReason) ? finish.finishReason : null;
}

/** Drive `streamText` on `model` (built with the replay fetch) and describe what it gave. */
export async function runStreamText(makeModel, chunks, status, headers, fallbackType, calls = { n: 0 }) {
  const fetch = replayFetch(chunks, status, serveHeaders(status, headers, fallbackType), calls);
  const result = streamText({ model: makeModel(fetch), prompt: 'hi', maxRetries: 0, onError() {} });
  const blocks = [];
  const open = new Map(); // part id -> block
  let finish = null;
  let error = null;
  let meta = {};
  let stepMetadata = null;
  // The Gemini model keys its metadata `googleVertex` (and `vertex`) on Vertex, `google` elsewhere.
  const googleOf = (md = {}) => md.google ?? md.googleVertex ?? md.vertex;
  const signatureOf = (md = {}) => md.anthropic?.signature ?? md.anthropic?.redactedData ?? md.bedrock?.signature
    ?? md.bedrock?.redactedData ?? googleOf(md)?.thoughtSignature ?? md.openai?.reasoningEncryptedContent ?? null;
  const redactedOf = (md = {}) => Boolean(md.anthropic?.redactedData ?? md.bedrock?.redactedData);
  try {
    for await (const part of result.fullStream) {
      const md = part.providerMetadata;
      switch (part.type) {
        case 'text-start': {
          // Anthropic compaction summaries arrive as text parts marked in providerMetadata
          // (js-adapters.md, section 3): not the assistant's text, so not a text block.
          const b = text('');
          open.set(`t${part.id}`, b);
          if (md?.anthropic?.type !== 'compaction') blocks.push(b);
          break;
        }
        case 'text-delta': {
          let b = open.get(`t${part.id}`);
          if (!b) { b = text(''); open.set(`t${part.id}`, b); blocks.push(b); }
          b.content += part.text ?? part.delta ?? '';
          if (googleOf(md)?.thoughtSignature) b.signature = googleOf(md).thoughtSignature;
          break;
        }
        case 'reasoning-start': case 'reasoning-delta': case 'reasoning-end': {
          let b = open.get(`r${part.id}`);
          if (!b) {
            // One reasoning item of OpenAI Responses streams one part per summary part; the
            // item is one thinking block, its parts joined as the reference joins them.
            const item = md?.openai?.itemId;
            const prev = item ? blocks.find((x) => x.type === 'thinking' && x._item === item) : null;
            if (prev) { prev.content += '\n\n'; b = prev; } else { b = thinking(''); b._item = item; blocks.push(b); }
            open.set(`r${part.id}`, b);
          }
          if (part.type === 'reasoning-delta') b.content += part.text ?? part.delta ?? '';
          const sig = signatureOf(md);
          if (sig) { b.signature = sig; b.redacted = redactedOf(md); }
          break;
        }
        case 'tool-call': {
          if (part.providerExecuted) break; // server tools: not client calls
          blocks.push(toolCall(part.toolCallId, part.toolName, part.input === undefined ? '' : part.input));
          break;
        }
        case 'finish-step': meta = part.response ?? meta; stepMetadata = part.providerMetadata ?? stepMetadata; break;
        case 'finish': finish = part; break;
        case 'error': error = error ?? part.error; break;
        default: break;
      }
    }
  } catch (err) {
    // "Only errors that stop the stream are thrown" by the iteration: the library raised.
    error = error ?? err;
  }
  for (const b of blocks) delete b._item;
  const content = blocks.filter((b) => b.type !== 'text' || b.content);
  for (const b of content) if (b.type === 'tool_call' && typeof b.arguments !== 'string' && (b.arguments === null || typeof b.arguments !== 'object' || Array.isArray(b.arguments))) b.arguments = JSON.stringify(b.arguments);
  const u = finish?.totalUsage;
  const usage = u && Number.isInteger(u.inputTokens) ? {
    input: count(u.inputTokenDetails?.noCacheTokens ?? u.inputTokens - (u.inputTokenDetails?.cacheReadTokens ?? 0) - (u.inputTokenDetails?.cacheWriteTokens ?? 0)),
    output: count(u.outputTokens), cache_read: count(u.inputTokenDetails?.cacheReadTokens), cache_write: count(u.inputTokenDetails?.cacheWriteTokens),
  } : null;
  const message = {
    content,
    stop_reason: stopOf(finish),
    usage,
    model: meta.modelId || null,
    response_id: meta.id || null,
    // `interrupted` is how the SDK says the stream ended without a finish (v7): an error
    // end it surfaces without throwing.
    error: finish?.finishReason === 'interrupted' && !error ? "finishReason 'interrupted': the stream ended without a finish" : null,
    // Gemini's finishMessage (why the candidate was stopped), kept in the step's metadata.
    stop_details: googleOf(stepMetadata ?? {})?.finishMessage ?? null,
  };
  const raw = { finishReason: finish?.finishReason ?? null, ...(calls.urls ? { urls: calls.urls } : {}) };
  if (error) return { raised: raisedOf(error, providerMessage(error)), message, requests: calls.n, raw };
  return { message, requests: calls.n, raw };
}
