// @google/genai on Vertex AI: `new GoogleGenAI({vertexai: true, project, location, ...})`
// then `models.generateContentStream(...)`, the parts joined as js-google-genai joins them
// (lib/google-genai.mjs). The client asks
// `.../projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse`
// through the replay fetch, authorized by a fake access token (lib/vertex.mjs).
import { pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, versions } from '../lib/protocol.mjs';
import { collect } from '../lib/google-genai.mjs';
import { GEMINI_LOCATION, PROJECT, googleAuthLibraryOf, offlineAuthClient } from '../lib/vertex.mjs';

const { GoogleGenAI } = await import('@google/genai');
const auth = googleAuthLibraryOf('@google/genai');

await serveProtocol({
  implementation: {
    name: 'js-google-genai-vertex', version: pkgVersion('@google/genai'),
    libraries: versions({ '@google/genai': '@google/genai', 'google-auth-library': 'google-auth-library' }),
    homepage: 'https://github.com/googleapis/js-genai', issues: 'https://github.com/googleapis/js-genai/issues',
  },
  protocols: ['vertex-gemini'],
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0, urls: [] };
    const ai = new GoogleGenAI({
      vertexai: true, project: PROJECT, location: GEMINI_LOCATION,
      googleAuthOptions: { authClient: offlineAuthClient(auth) },
      httpOptions: { fetch: replayFetch(chunks, status, serveHeaders(status, headers), calls), retryOptions: { attempts: 1 } },
    });
    const received = [];
    try {
      for await (const r of await ai.models.generateContentStream({ model: 'gemini-harness', contents: 'hi' })) received.push(r);
    } catch (err) {
      const reply = { raised: raisedOf(err), requests: calls.n, raw: { urls: calls.urls } };
      if (received.length) reply.message = collect(received);
      return reply;
    }
    return { message: collect(received), requests: calls.n, raw: { urls: calls.urls } };
  },
});
