// @mariozechner/pi-ai's Vertex AI provider (api `google-vertex`, Gemini only: pi 0.73.1 has
// no Vertex route for Claude): `stream(model, context, options)` iterated to the end, then
// `result()`, read as js-pi-ai reads it. The provider builds its own client per call, a
// `GoogleGenAI({vertexai: true, ...})` of the @google/genai copy nested in pi, and takes no
// fetch, auth client or credentials object: only an API key (Vertex express mode,
// `options.apiKey` or GOOGLE_CLOUD_API_KEY) or Application Default Credentials, whose
// token refresh would go out through the same global fetch. So the run uses express mode
// (`apiKey`: the same Vertex client and stream reading, URL
// `https://aiplatform.googleapis.com/v1/publishers/google/models/{model}:streamGenerateContent?alt=sse`,
// no project in the path) and swaps globalThis.fetch for the replay fetch for the duration
// of one run, as js-pi-ai does for its Google provider.
import { pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, versions } from '../lib/protocol.mjs';
import { piMessage } from '../lib/pi-ai.mjs';

const { stream } = await import('@mariozechner/pi-ai');

const MODEL = {
  id: 'harness-model', name: 'harness-model', api: 'google-vertex', provider: 'google-vertex', baseUrl: '', reasoning: false,
  input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 1024,
};

await serveProtocol({
  implementation: {
    name: 'js-pi-ai-vertex', version: pkgVersion('@mariozechner/pi-ai'),
    libraries: versions({
      '@mariozechner/pi-ai': '@mariozechner/pi-ai',
      '@google/genai (nested in @mariozechner/pi-ai)': '@mariozechner/pi-ai/node_modules/@google/genai',
    }),
    homepage: 'https://github.com/badlogic/pi-mono', issues: 'https://github.com/badlogic/pi-mono/issues',
  },
  protocols: ['vertex-gemini'],
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0, urls: [] };
    const saved = globalThis.fetch;
    globalThis.fetch = replayFetch(chunks, status, serveHeaders(status, headers), calls);
    try {
      const s = stream(MODEL, { messages: [{ role: 'user', content: 'hi', timestamp: 0 }] }, { apiKey: 'harness-key', maxRetries: 0 });
      for await (const _event of s) { /* the events are pi's; the result is read below */ }
      return { message: piMessage(await s.result()), requests: calls.n, raw: { urls: calls.urls } };
    } catch (err) {
      return { raised: raisedOf(err), requests: calls.n, raw: { urls: calls.urls } };
    } finally {
      globalThis.fetch = saved;
    }
  },
});
