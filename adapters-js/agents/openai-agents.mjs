// The OpenAI Agents SDK for JS (@openai/agents): `run(agent, prompt, {stream: true})` on an
// `Agent`, the stream read to its end, then `result.finalOutput`: the JS twin of the Python
// openai-agents row (harness/stream_harness/agents/frameworks/openai_agents.py), wired the
// same way so the two SDKs' rows compare.
//
// The model is `OpenAIChatCompletionsModel` or `OpenAIResponsesModel` on an injected
// `OpenAI` client pointed at the scenario server (the SDK's documented way to use another
// endpoint); tracing is disabled (its exporter would upload to the platform). Tools are
// `tool()`s over the task's plain JSON schemas with `strict: false` (the harness's schemas
// are not written for OpenAI's strict mode) and no `errorFunction`, so a tool that throws
// is answered with the SDK's default tool-error text: the row shows the default policy.
//
// Retries: `modelSettings.retry` (runner-managed retries) is opt-in and left off, so the
// openai client's own retries apply at their defaults (maxRetries 2). Nothing is changed.
import { callLedger, openaiBase, serveAgent } from '../lib/agent-protocol.mjs';
import { pkgVersion } from '../lib/protocol.mjs';

const { Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, run, setTracingDisabled, tool } =
  await import('@openai/agents');
const { default: OpenAI } = await import('openai');

const MODELS = {
  'openai-completions': OpenAIChatCompletionsModel,
  'openai-responses': OpenAIResponsesModel,
};

setTracingDisabled(true);

/** A task tool as the SDK's function tool, executed through the scenario's ledger. */
function asTool(t) {
  return tool({
    name: t.name,
    description: t.description ?? '',
    // The SDK takes a plain JSON schema as is when strict is off; it needs an object root.
    parameters: { type: 'object', properties: {}, ...t.parameters },
    strict: false,
    execute: (args) => callLedger(t, args),
  });
}

async function runTask(task) {
  const Model = MODELS[task.protocol];
  if (!Model) {
    throw new Error(`js-openai-agents does not speak ${task.protocol} (it speaks ${Object.keys(MODELS).join(', ')})`);
  }
  const client = new OpenAI({ baseURL: openaiBase(task), apiKey: task.api_key });
  const agent = new Agent({
    name: 'stream-harness',
    instructions: task.system ?? undefined,
    model: new Model(client, task.model),
    tools: task.tools.map(asTool),
  });
  const result = await run(agent, task.prompt, { stream: true, maxTurns: task.limits.max_turns });
  // Reading the stream to its end is what drives the run; a failure rejects the iteration
  // or, where the SDK keeps the queued events for the reader, only `completed`.
  for await (const _event of result) {
    // the events themselves are the harness server's to observe, not the adapter's
  }
  await result.completed;
  return result.finalOutput;
}

await serveAgent({
  name: 'js-openai-agents',
  framework: { '@openai/agents': '@openai/agents' },
  protocols: Object.keys(MODELS),
  settings: `openai ${pkgVersion('openai')} client; tracing disabled (setTracingDisabled(true)); retries and delays at their defaults`,
  run: runTask,
});
