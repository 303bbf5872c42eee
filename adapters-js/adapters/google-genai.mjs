// @google/genai: `models.generateContentStream(...)`, one GenerateContentResponse per SSE
// event, never accumulated: its users join the parts, and so does this adapter, exactly as
// the Python google-genai adapter does (harness/stream_harness/adapters/sdks/google_genai.py, accumulate_parts).
import { pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, versions } from '../lib/protocol.mjs';
import { collect } from '../lib/google-genai.mjs';

const { GoogleGenAI } = await import('@google/genai');

await serveProtocol({
  implementation: {
    name: 'js-google-genai', version: pkgVersion('@google/genai'), libraries: versions({ '@google/genai': '@google/genai' }),
    homepage: 'https://github.com/googleapis/js-genai', issues: 'https://github.com/googleapis/js-genai/issues',
  },
  protocols: ['google-generative-ai'],
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0 };
    const ai = new GoogleGenAI({ apiKey: 'test', httpOptions: { fetch: replayFetch(chunks, status, serveHeaders(status, headers), calls), retryOptions: { attempts: 1 } } });
    const received = [];
    try {
      for await (const r of await ai.models.generateContentStream({ model: 'gemini-harness', contents: 'hi' })) received.push(r);
    } catch (err) {
      const reply = { raised: raisedOf(err), requests: calls.n };
      if (received.length) reply.message = collect(received);
      return reply;
    }
    return { message: collect(received), requests: calls.n };
  },
});
