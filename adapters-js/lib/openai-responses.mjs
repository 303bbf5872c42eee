// A Responses `Response` object (final, or from a terminal lifecycle event) as the
// protocol's message: shared by the openai (node) adapters, HTTP streaming and WebSocket mode.
import { count, text, thinking, toolCall } from './protocol.mjs';

const int = (v) => (Number.isInteger(v) ? v : 0);

const sigV1 = (id, extra = {}) => JSON.stringify({ v: 1, id, ...Object.fromEntries(Object.entries(extra).filter(([, v]) => v)) });
const wireOrder = (v) => {
  if (Array.isArray(v)) return v.map(wireOrder);
  if (v && typeof v === 'object') {
    const head = ['id', 'type'].filter((k) => k in v);
    return Object.fromEntries([...head, ...Object.keys(v).filter((k) => !head.includes(k))].map((k) => [k, wireOrder(v[k])]));
  }
  return v;
};

/** A Response (final, or from a terminal lifecycle event) as the protocol's message. */
export function responsesMessage(r) {
  const content = [];
  const refusals = [];
  const ids = new Set();
  for (const item of r.output ?? []) {
    if (item.type === 'message') {
      let t = '';
      for (const part of item.content ?? []) {
        if (part.type === 'output_text') t += part.text ?? '';
        else if (part.type === 'refusal') { t += part.refusal ?? ''; refusals.push(part.refusal ?? ''); }
      }
      if (t) content.push(text(t, sigV1(item.id, { phase: item.phase })));
    } else if (item.type === 'reasoning') {
      const parts = [...(item.summary ?? []).map((s) => s.text).filter(Boolean),
        ...(item.content ?? []).filter((c) => c.type === 'reasoning_text' && c.text).map((c) => c.text)];
      content.push(thinking(parts.join('\n\n'), JSON.stringify(wireOrder(item))));
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      let id = item.call_id || item.id;
      if (ids.has(id)) id = `${id}|${item.id}`;
      ids.add(id);
      if (item.type === 'function_call') content.push({ ...toolCall(id, item.name, item.arguments ?? ''), signature: sigV1(item.id, { namespace: item.namespace }) });
      else content.push({ ...toolCall(id, item.name, { input: item.input }), signature: sigV1(item.id, { type: item.type, namespace: item.namespace }) });
    }
  }
  const reason = r.incomplete_details?.reason;
  const stop = r.status && reason ? `${r.status}/${reason}` : (r.status ?? null);
  const u = r.usage;
  let usage = null;
  if (u) {
    const cacheRead = int(u.input_tokens_details?.cached_tokens);
    const cacheWrite = int(u.input_tokens_details?.cache_write_tokens);
    usage = { input: Math.max(0, int(u.input_tokens) - cacheRead - cacheWrite), output: count(u.output_tokens), cache_read: count(cacheRead), cache_write: count(cacheWrite), total: Number.isInteger(u.total_tokens) ? u.total_tokens : null };
  }
  return {
    content, stop_reason: stop, usage, model: r.model || null, response_id: r.id || null,
    refusal: refusals.length ? refusals.join('\n') : null,
    error: r.error?.message ?? null,
  };
}
