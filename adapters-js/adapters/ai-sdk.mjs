// The Vercel AI SDK `streamText` over its first-party providers: @ai-sdk/anthropic,
// @ai-sdk/openai (chat and responses), @ai-sdk/google and @ai-sdk/amazon-bedrock.
import { pkgVersion, serveProtocol, versions } from '../lib/protocol.mjs';
import { runStreamText } from '../lib/ai-sdk.mjs';

const { createAnthropic } = await import('@ai-sdk/anthropic');
const { createOpenAI } = await import('@ai-sdk/openai');
const { createGoogleGenerativeAI } = await import('@ai-sdk/google');
const { createAmazonBedrock } = await import('@ai-sdk/amazon-bedrock');

const MODELS = {
  'anthropic-messages': (fetch) => createAnthropic({ apiKey: 'test', fetch })('claude-harness'),
  'openai-completions': (fetch) => createOpenAI({ apiKey: 'test', fetch }).chat('gpt-harness'),
  'openai-responses': (fetch) => createOpenAI({ apiKey: 'test', fetch }).responses('gpt-harness'),
  'google-generative-ai': (fetch) => createGoogleGenerativeAI({ apiKey: 'test', fetch })('gemini-harness'),
  'bedrock-converse-stream': (fetch) => createAmazonBedrock({ region: 'us-east-1', accessKeyId: 'AKIDHARNESS', secretAccessKey: 'harness', fetch })('anthropic.claude-harness'),
};

await serveProtocol({
  implementation: {
    name: 'js-ai-sdk', version: pkgVersion('ai'),
    libraries: versions({
      ai: 'ai', '@ai-sdk/anthropic': '@ai-sdk/anthropic', '@ai-sdk/openai': '@ai-sdk/openai', '@ai-sdk/google': '@ai-sdk/google',
      '@ai-sdk/amazon-bedrock': '@ai-sdk/amazon-bedrock', '@ai-sdk/provider-utils': '@ai-sdk/provider-utils',
      '@ai-sdk/anthropic (nested in @ai-sdk/amazon-bedrock)': '@ai-sdk/amazon-bedrock/node_modules/@ai-sdk/anthropic',
      '@ai-sdk/provider-utils (nested in ai)': 'ai/node_modules/@ai-sdk/provider-utils',
    }),
    homepage: 'https://ai-sdk.dev', issues: 'https://github.com/vercel/ai/issues',
  },
  protocols: Object.keys(MODELS),
  run: (protocol, chunks, status, headers) => runStreamText(MODELS[protocol], chunks, status, headers,
    protocol === 'bedrock-converse-stream' ? 'application/vnd.amazon.eventstream' : 'text/event-stream'),
});
