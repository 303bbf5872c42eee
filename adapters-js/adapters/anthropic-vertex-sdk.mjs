// @anthropic-ai/vertex-sdk: `new AnthropicVertex({region, projectId, authClient, fetch})`,
// then `messages.stream(...)` and `finalMessage()` as js-anthropic-sdk runs them: the Vertex
// client is @anthropic-ai/sdk's BaseAnthropic (the top-level copy, no nested one) with a
// middleware that moves the model into the URL (`...:streamRawPredict`) and
// `anthropic_version` into the body, and adds Google OAuth headers from the auth client
// (a fake access token, lib/vertex.mjs). Message mapping: lib/anthropic.mjs.
import { pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, versions } from '../lib/protocol.mjs';
import { anthropicMessage } from '../lib/anthropic.mjs';
import { CLAUDE_REGION, PROJECT, googleAuthLibraryOf, offlineAuthClient } from '../lib/vertex.mjs';

const { AnthropicVertex } = await import('@anthropic-ai/vertex-sdk');
const auth = googleAuthLibraryOf('@anthropic-ai/vertex-sdk');

await serveProtocol({
  implementation: {
    name: 'js-anthropic-vertex-sdk', version: pkgVersion('@anthropic-ai/vertex-sdk'),
    libraries: versions({
      '@anthropic-ai/vertex-sdk': '@anthropic-ai/vertex-sdk', '@anthropic-ai/sdk': '@anthropic-ai/sdk',
      'google-auth-library': 'google-auth-library',
    }),
    homepage: 'https://github.com/anthropics/anthropic-sdk-typescript/tree/main/packages/vertex-sdk',
    issues: 'https://github.com/anthropics/anthropic-sdk-typescript/issues',
  },
  protocols: ['vertex-anthropic'],
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0, urls: [] };
    const client = new AnthropicVertex({
      region: CLAUDE_REGION, projectId: PROJECT, authClient: offlineAuthClient(auth), maxRetries: 0,
      fetch: replayFetch(chunks, status, serveHeaders(status, headers), calls),
    });
    let stream;
    try {
      stream = client.messages.stream({ model: 'claude-harness', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] });
      const final = await stream.finalMessage();
      return { message: anthropicMessage(final), requests: calls.n, raw: { urls: calls.urls } };
    } catch (err) {
      let snapshot = null;
      try { snapshot = stream?.currentMessage ?? null; } catch { snapshot = null; }
      const reply = { raised: raisedOf(err), requests: calls.n, raw: { urls: calls.urls } };
      if (snapshot) reply.message = anthropicMessage(snapshot);
      return reply;
    }
  },
});
