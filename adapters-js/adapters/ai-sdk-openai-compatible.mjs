// The Vercel AI SDK `streamText` over @ai-sdk/openai-compatible (the provider people use
// for Groq, DeepSeek, vLLM, Ollama, OpenRouter... behind a base URL).
import { pkgVersion, serveProtocol, versions } from '../lib/protocol.mjs';
import { runStreamText } from '../lib/ai-sdk.mjs';

const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');

await serveProtocol({
  implementation: {
    name: 'js-ai-sdk-openai-compatible', version: pkgVersion('@ai-sdk/openai-compatible'),
    libraries: versions({ ai: 'ai', '@ai-sdk/openai-compatible': '@ai-sdk/openai-compatible' }),
    homepage: 'https://ai-sdk.dev', issues: 'https://github.com/vercel/ai/issues',
  },
  protocols: ['openai-completions'],
  run: (protocol, chunks, status, headers) => runStreamText(
    (fetch) => createOpenAICompatible({ name: 'harness', baseURL: 'http://harness.invalid/v1', apiKey: 'test', fetch, includeUsage: true })('harness-model'),
    chunks, status, headers),
});
