// What the two Vercel AI SDK agent rows share (ai-sdk-stream-text.mjs: `streamText` with
// tools; ai-sdk-tool-loop-agent.mjs: `ToolLoopAgent.stream()`): the provider model each
// protocol is spoken through, pointed at the scenario server; the task's tools as AI SDK
// tools that run through the ledger; the text stream read to its end as a user reads it;
// and the serving of the agent messages. Each row file is then only "call the agent".
//
// Nothing here changes a retry setting: `maxRetries` stays at the AI SDK's default (2),
// `streamRetries` stays unset (no resend of a stream that failed once it had begun), and
// the retry-after handling is the SDK's own (specs/agent_conventions.yaml, ai-sdk-7).
import { callLedger, openaiBase, serveAgent } from '../lib/agent-protocol.mjs';
import { pkgVersion } from '../lib/protocol.mjs';

const { isStepCount, jsonSchema, tool } = await import('ai');
const { createOpenAI } = await import('@ai-sdk/openai');
const { createAnthropic } = await import('@ai-sdk/anthropic');
const { createGoogleGenerativeAI } = await import('@ai-sdk/google');

const root = (task) => task.base_url.replace(/\/$/, '');

// The server answers request k with response k whatever the path, so each provider only
// needs its API root here: the OpenAI provider appends /chat/completions or /responses to
// its baseURL, the Anthropic one /messages, the Google one /models/{id}:streamGenerateContent.
const MODELS = {
  'openai-completions': (task) => createOpenAI({ baseURL: openaiBase(task), apiKey: task.api_key }).chat(task.model),
  'openai-responses': (task) => createOpenAI({ baseURL: openaiBase(task), apiKey: task.api_key }).responses(task.model),
  'anthropic-messages': (task) => createAnthropic({ baseURL: `${root(task)}/v1`, apiKey: task.api_key })(task.model),
  'google-generative-ai': (task) => createGoogleGenerativeAI({ baseURL: `${root(task)}/v1beta`, apiKey: task.api_key })(task.model),
};

export const PROTOCOLS = Object.keys(MODELS);

/** The provider model that speaks `task.protocol`, pointed at the scenario server. */
export function modelFor(task) {
  const make = MODELS[task.protocol];
  if (!make) throw new Error(`does not speak ${task.protocol} (it speaks ${PROTOCOLS.join(', ')})`);
  return make(task);
}

/** The task's tools as AI SDK tools; each execution goes through the ledger. */
export function toolsFor(task) {
  return Object.fromEntries(task.tools.map((t) => [t.name, tool({
    description: t.description,
    inputSchema: jsonSchema(t.parameters),
    execute: (args) => callLedger(t, args),
  })]));
}

/**
 * The row's configuration (harness/stream_harness/agents/js.py OPTIONS): `--options JSON`
 * after the script's path when the harness starts a configured row such as
 * `js-ai-sdk-agent[maxRetries=5]`; empty for the row at its defaults.
 */
export function rowOptions(argv = process.argv) {
  const at = argv.indexOf('--options');
  return at >= 0 && at + 1 < argv.length ? JSON.parse(argv[at + 1]) : {};
}

/** The agent loop's bound: one step is one model turn, so the task's turn limit. */
export const stopWhen = (task) => isStepCount(task.limits.max_turns);

/**
 * Start the run with `start(onError)`, read its text stream as a user shows it (every
 * step's text deltas, to the end) and return the final text: `result.text`, the last
 * step's text. The SDK does not throw a failure to a reader of `textStream` or `text`: an
 * error that ends a step (an HTTP error once retries are spent, an error event in the
 * stream) becomes an `error` part, which `textStream` filters out, and `text` still
 * resolves (vercel/ai#17974; the docs point to `onError` or the full stream). So the
 * error the SDK hands `onError` is raised once the stream has ended, the first one, as the
 * SDK built it.
 */
export async function finalText(start) {
  const errors = [];
  const result = await start(({ error }) => { errors.push(error); });
  for await (const _delta of result.textStream) {
    // shown to the user as it arrives; the run's answer is the last step's text
  }
  if (errors.length > 0) throw errors[0];
  return await result.text;
}

const PROVIDERS = ['@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google'];

/** Serve one AI SDK row: `run(task)` resolves to the final text or throws what the SDK raised. */
export function serveAiSdkAgent({ name, how, run }) {
  const providers = PROVIDERS.map((p) => `${p} ${pkgVersion(p) ?? '(not installed)'}`).join(', ');
  return serveAgent({
    name,
    framework: { ai: 'ai' },
    protocols: PROTOCOLS,
    settings: `none: ${how}, errors read from onError (textStream does not carry them), stopWhen isStepCount(max_turns), maxRetries and retry-after handling at the SDK's defaults (${providers})`,
    run,
  });
}
