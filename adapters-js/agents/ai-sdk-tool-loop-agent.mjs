// Row js-ai-sdk-tool-loop-agent: the AI SDK's agent class, `ToolLoopAgent`, run with
// `stream()` (the docs' way to stream an agent, ai/docs/03-agents/02-building-agents.mdx
// "Stream Text"), its text stream read to the end as a user reads it; the answer is the
// final step's text. The task's turn limit replaces the class's default of 20 steps.
import { finalText, modelFor, serveAiSdkAgent, stopWhen, toolsFor } from './ai-sdk-common.mjs';

const { ToolLoopAgent } = await import('ai');

await serveAiSdkAgent({
  name: 'js-ai-sdk-tool-loop-agent',
  how: 'ToolLoopAgent.stream()',
  run: (task) => finalText((onError) => new ToolLoopAgent({
    model: modelFor(task),
    instructions: task.system ?? undefined,
    tools: toolsFor(task),
    stopWhen: stopWhen(task),
    onError,
  }).stream({ prompt: task.prompt })),
});
