// @anthropic-ai/sdk: `client.messages.stream(...)` then `finalMessage()`, as its users call it.
// Mapping: specs/adapters.md (section "JavaScript adapters"); the SDK keeps raw stop
// reasons and Anthropic's own usage fields, so no convention needs undoing.
import { pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol } from '../lib/protocol.mjs';
import { anthropicMessage } from '../lib/anthropic.mjs';

const { default: Anthropic } = await import('@anthropic-ai/sdk');

await serveProtocol({
  implementation: {
    name: 'js-anthropic-sdk', version: pkgVersion('@anthropic-ai/sdk'),
    libraries: { '@anthropic-ai/sdk': pkgVersion('@anthropic-ai/sdk') },
    homepage: 'https://github.com/anthropics/anthropic-sdk-typescript',
    issues: 'https://github.com/anthropics/anthropic-sdk-typescript/issues',
  },
  protocols: ['anthropic-messages'],
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0 };
    const client = new Anthropic({ apiKey: 'test', baseURL: 'http://harness.invalid', maxRetries: 0, fetch: replayFetch(chunks, status, serveHeaders(status, headers), calls) });
    let stream;
    try {
      stream = client.messages.stream({ model: 'claude-harness', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }] });
      const final = await stream.finalMessage();
      return { message: anthropicMessage(final), requests: calls.n };
    } catch (err) {
      let snapshot = null;
      try { snapshot = stream?.currentMessage ?? null; } catch { snapshot = null; }
      const reply = { raised: raisedOf(err), requests: calls.n };
      if (snapshot) reply.message = anthropicMessage(snapshot);
      return reply;
    }
  },
});
