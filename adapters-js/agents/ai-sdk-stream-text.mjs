// Row js-ai-sdk-agent: the Vercel AI SDK's own loop, `streamText` with tools and
// `stopWhen: isStepCount(max_turns)` (the SDK executes the tools and starts the next step),
// its text stream read to the end as a user reads it; the answer is the final step's text.
import { finalText, modelFor, rowOptions, serveAiSdkAgent, stopWhen, toolsFor } from './ai-sdk-common.mjs';

// A configured row (js-ai-sdk-agent[maxRetries=N]) sets streamText's maxRetries; unset, the SDK's default.
const { maxRetries } = rowOptions();

const { streamText } = await import('ai');

await serveAiSdkAgent({
  name: 'js-ai-sdk-agent',
  how: 'streamText with tools',
  run: (task) => finalText((onError) => streamText({
    model: modelFor(task),
    instructions: task.system ?? undefined,
    prompt: task.prompt,
    tools: toolsFor(task),
    stopWhen: stopWhen(task),
    ...(maxRetries === undefined ? {} : { maxRetries }),
    onError,
  })),
});
