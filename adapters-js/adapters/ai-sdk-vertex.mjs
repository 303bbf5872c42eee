// The Vercel AI SDK `streamText` over @ai-sdk/google-vertex: its Gemini provider
// (`createVertex`, the GoogleLanguageModel of @ai-sdk/google on
// `.../v1beta1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse`)
// and its Anthropic provider (`createVertexAnthropic` from @ai-sdk/google-vertex/anthropic,
// the AnthropicLanguageModel of @ai-sdk/anthropic on `...:streamRawPredict`). Both are
// given the replay fetch and a GoogleAuth over a fake access token (lib/vertex.mjs), from
// the google-auth-library copy nested in @ai-sdk/google-vertex. Parts read as js-ai-sdk
// reads them (lib/ai-sdk.mjs).
import { pkgVersion, serveProtocol, versions } from '../lib/protocol.mjs';
import { runStreamText } from '../lib/ai-sdk.mjs';
import { CLAUDE_REGION, GEMINI_LOCATION, PROJECT, googleAuthLibraryOf, offlineAuthClient } from '../lib/vertex.mjs';

const { createVertex } = await import('@ai-sdk/google-vertex');
const { createVertexAnthropic } = await import('@ai-sdk/google-vertex/anthropic');
const auth = googleAuthLibraryOf('@ai-sdk/google-vertex');

const MODELS = {
  'vertex-gemini': (fetch) => createVertex({
    project: PROJECT, location: GEMINI_LOCATION, googleAuthOptions: { authClient: offlineAuthClient(auth) }, fetch,
  })('gemini-harness'),
  'vertex-anthropic': (fetch) => createVertexAnthropic({
    project: PROJECT, location: CLAUDE_REGION, googleAuthOptions: { authClient: offlineAuthClient(auth) }, fetch,
  })('claude-harness'),
};

await serveProtocol({
  implementation: {
    name: 'js-ai-sdk-vertex', version: pkgVersion('@ai-sdk/google-vertex'),
    libraries: versions({
      '@ai-sdk/google-vertex': '@ai-sdk/google-vertex', ai: 'ai', '@ai-sdk/google': '@ai-sdk/google', '@ai-sdk/anthropic': '@ai-sdk/anthropic',
      '@ai-sdk/provider-utils (nested in @ai-sdk/google-vertex)': '@ai-sdk/google-vertex/node_modules/@ai-sdk/provider-utils',
      'google-auth-library (nested in @ai-sdk/google-vertex)': '@ai-sdk/google-vertex/node_modules/google-auth-library',
    }),
    homepage: 'https://ai-sdk.dev/providers/ai-sdk-providers/google-vertex', issues: 'https://github.com/vercel/ai/issues',
  },
  protocols: Object.keys(MODELS),
  run: (protocol, chunks, status, headers) => runStreamText(MODELS[protocol], chunks, status, headers, 'text/event-stream', { n: 0, urls: [] }),
});
