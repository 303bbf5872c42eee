// LangGraph.js's prebuilt ReAct agent (`createReactAgent` from @langchain/langgraph/prebuilt),
// streamed: the JS counterpart of the Python langgraph row
// (harness/stream_harness/agents/frameworks/langgraph.py).
//
// Why createReactAgent: @langchain/langgraph 1.7.3 marks it deprecated in favour of
// `createAgent` from the `langchain` package (the Python row's create_agent), but that
// package is not in adapters-js/package.json; createReactAgent is the prebuilt agent the
// installed LangGraph ships, and it builds the same graph (model node, ToolNode, loop).
//
// The chat models are the provider packages' own, each pointed at the server the way
// adapters/langchain.mjs points them (here by URL, not a replay fetch): ChatOpenAI (Chat
// Completions, or Responses with `useResponsesApi`) with `configuration.baseURL`, and
// ChatAnthropic with `anthropicApiUrl` at the server root (its nested @anthropic-ai/sdk adds
// /v1/messages). Both with `streaming: true`. The graph runs with `stream()` consumed to the
// end; the answer is the text of the last message of the last 'values' chunk (the final
// state). Tools are `tool()`s with the task's JSON schemas, executed through the ledger.
//
// Why streamMode ['values', 'messages'] and not 'values' alone: with 'messages' LangGraph
// attaches its token streamer, so each model call streams its chunks to the caller through
// `_streamResponseChunks` (how a LangGraph app shows tokens). With 'values' alone the model is
// invoked through ChatOpenAI's `_generate`, which after every streamed Chat Completions call
// estimates token usage with tiktoken, whose ranks @langchain/core fetches from
// https://tiktoken.pages.dev through an AsyncCaller (6 retries): offline, as here, each model
// instance stalls 63 to 126 s before falling back, and the run times out.
//
// Retries: all at the library defaults. Both chat models build their SDK client with
// maxRetries 0 and retry in @langchain/core's AsyncCaller (maxRetries 6, p-retry backoff from
// 1 s doubling, times 1 to 2), around the request only: a stream that fails once handed over
// is not resent. AsyncCaller takes no delay setting, so delays are not shortened.
import { callLedger, openaiBase, serveAgent } from '../lib/agent-protocol.mjs';

const { createReactAgent } = await import('@langchain/langgraph/prebuilt');
const { tool } = await import('@langchain/core/tools');
const { ChatOpenAI } = await import('@langchain/openai');
const { ChatAnthropic } = await import('@langchain/anthropic');

const PROTOCOLS = ['openai-completions', 'openai-responses', 'anthropic-messages'];

// The outcome must reach the harness before it stops waiting (task.limits.timeout_s after it
// sent the task), so the run is aborted a little earlier: a run still retrying then ends as
// the framework's abort error, not as a hung adapter (the Python rows' run_guarded bound).
const ANSWER_MARGIN_MS = 1000;

function chatModel(task) {
  if (task.protocol === 'anthropic-messages') {
    return new ChatAnthropic({ model: task.model, apiKey: task.api_key, anthropicApiUrl: task.base_url, streaming: true });
  }
  if (PROTOCOLS.includes(task.protocol)) {
    return new ChatOpenAI({
      model: task.model, apiKey: task.api_key, streaming: true,
      useResponsesApi: task.protocol === 'openai-responses',
      configuration: { baseURL: openaiBase(task) },
    });
  }
  throw new Error(`js-langgraph does not speak ${JSON.stringify(task.protocol)} (it speaks ${PROTOCOLS.join(', ')})`);
}

function ledgerTool(t) {
  return tool((args) => callLedger(t, args), { name: t.name, description: t.description, schema: t.parameters });
}

await serveAgent({
  name: 'js-langgraph',
  framework: { '@langchain/langgraph': '@langchain/langgraph' },
  protocols: PROTOCOLS,
  settings: 'none: createReactAgent and the chat models (streaming: true) at their defaults; '
    + 'the run is aborted through its signal just before the task timeout',
  async run(task) {
    const agent = createReactAgent({
      llm: chatModel(task),
      tools: task.tools.map(ledgerTool),
      ...(task.system ? { prompt: task.system } : {}),
    });
    const config = {
      streamMode: ['values', 'messages'],
      recursionLimit: 2 * task.limits.max_turns + 1, // a model step and a tool step per turn
      signal: AbortSignal.timeout(Math.max(task.limits.timeout_s * 1000 - ANSWER_MARGIN_MS, 1)),
    };
    let state;
    for await (const [mode, chunk] of await agent.stream({ messages: [{ role: 'user', content: task.prompt }] }, config)) {
      if (mode === 'values') state = chunk; // the last is the final state
    }
    const messages = state?.messages ?? [];
    return { output: messages.at(-1)?.text ?? null, raw: { messages: messages.length } };
  },
});
