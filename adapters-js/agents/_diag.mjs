// temporary diagnostic (not committed): run streamText on a served scenario and print its parts
import { modelFor, toolsFor, stopWhen } from './ai-sdk-common.mjs';
const { streamText } = await import('ai');
const task = JSON.parse(process.argv[2]);
const result = streamText({ model: modelFor(task), prompt: task.prompt, tools: toolsFor(task), stopWhen: stopWhen(task), onError({ error }) { process.stderr.write(`onError: ${error?.constructor?.name} ${error?.message}\n`); } });
for await (const p of result.fullStream) {
  if (['text-delta','tool-input-delta','reasoning-delta'].includes(p.type)) continue;
  const extra = p.type === 'finish-step' || p.type === 'finish' ? ` finishReason=${p.finishReason} raw=${p.rawFinishReason}` : p.type === 'error' ? ` ${p.error?.constructor?.name}: ${p.error?.message}` : p.type === 'tool-call' ? ` ${p.toolName} ${JSON.stringify(p.input)} invalid=${p.invalid}` : '';
  process.stderr.write(`part ${p.type}${extra}\n`);
}
try { process.stderr.write(`text=${JSON.stringify(await result.text)} finishReason=${await result.finishReason} steps=${(await result.steps).length}\n`); } catch (e) { process.stderr.write(`text threw ${e.constructor.name}: ${e.message}\n`); }
