// The Mastra agent (@mastra/core `Agent`), its tools made with `createTool`, run with
// `agent.stream(prompt, {maxSteps})` consumed to its end.
//
// The model is given the way Mastra's docs show for a custom endpoint: its model router's
// `{providerId, modelId, url, apiKey, api}` config for the OpenAI wire protocols (the router
// then builds its own bundled OpenAI-compatible chat or OpenAI Responses model on that
// URL); the router has no custom-URL form for Anthropic or Gemini, so those two are the
// AI SDK provider models Mastra also accepts (`createAnthropic` / `createGoogleGenerativeAI`
// with a baseURL). Retries are Mastra's own layer at its defaults (the provider models
// never retry: Mastra calls their doStream itself).

// Mastra's own switches for its side effects, set before it loads (the provider registry
// decides at import whether to refresh itself from models.dev): no PostHog telemetry, no
// registry refresh, offline gateways. No storage, memory or observability is configured.
process.env.MASTRA_TELEMETRY_DISABLED = '1';
process.env.MASTRA_AUTO_REFRESH_PROVIDERS = 'false';
process.env.MASTRA_OFFLINE = 'true';

import { callLedger, openaiBase, serveAgent } from '../lib/agent-protocol.mjs';
import { pkgVersion } from '../lib/protocol.mjs';
import { modelFor } from './ai-sdk-common.mjs';

const { Agent } = await import('@mastra/core/agent');
const { createTool } = await import('@mastra/core/tools');

const MODELS = {
  'openai-completions': (task) => ({
    providerId: 'harness', modelId: task.model, url: openaiBase(task), apiKey: task.api_key, api: 'chat',
  }),
  'openai-responses': (task) => ({
    providerId: 'harness', modelId: task.model, url: openaiBase(task), apiKey: task.api_key, api: 'responses',
  }),
  // The AI SDK rows' own provider models (one place says how each is pointed at the server).
  'anthropic-messages': modelFor,
  'google-generative-ai': modelFor,
};

/** A task tool as a Mastra tool: its JSON schema as given (createTool accepts JSON Schema). */
function toolOf(t) {
  return createTool({
    id: t.name,
    description: t.description,
    inputSchema: { type: 'object', properties: {}, ...t.parameters },
    execute: (input) => callLedger(t, input),
  });
}

async function run(task) {
  const agent = new Agent({
    id: 'harness-agent',
    name: 'harness-agent',
    instructions: task.system ?? '',
    model: MODELS[task.protocol](task),
    tools: Object.fromEntries(task.tools.map((t) => [t.name, toolOf(t)])),
  });
  // The time limit is the harness's (the stdio side stops waiting and ends this process).
  const stream = await agent.stream(task.prompt, { maxSteps: task.limits.max_turns });
  // Read to the end as a streaming user does, then Mastra's documented checks for a failed
  // run (dist/docs MastraModelOutput, "Error handling"): getFullOutput raises the run's
  // error in 1.71, and `stream.error` is the check its docs give for when it does not.
  for await (const _chunk of stream.fullStream) { /* consumed */ }
  const output = await stream.getFullOutput();
  if (stream.error) throw stream.error;
  // The finish reason is what tells a Mastra user that a successful run was cut short.
  const raw = {
    finish_reason: output.finishReason ?? null,
    step_finish_reasons: (output.steps ?? []).map((s) => s.finishReason ?? null),
  };
  return { output: output.text, raw };
}

await serveAgent({
  name: 'js-mastra',
  framework: { '@mastra/core': '@mastra/core' },
  protocols: Object.keys(MODELS),
  settings: [
    'OpenAI protocols through the model router\'s {providerId, modelId, url, apiKey, api} config (its bundled OpenAI-compatible chat and OpenAI Responses models)',
    `Anthropic and Gemini as AI SDK models (@ai-sdk/anthropic ${pkgVersion('@ai-sdk/anthropic')}, @ai-sdk/google ${pkgVersion('@ai-sdk/google')})`,
    'MASTRA_TELEMETRY_DISABLED=1, MASTRA_OFFLINE=true, MASTRA_AUTO_REFRESH_PROVIDERS=false',
    'retries and eager tool execution at Mastra defaults (Agent maxRetries 0)',
  ].join('; '),
  run,
});
