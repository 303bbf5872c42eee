// @mariozechner/pi-ai: `stream(model, context, options)` iterated to the end, then
// `result()`. pi-ai has no fetch option (js-adapters.md, section 2): the Anthropic provider
// takes a pre-built client (options.client, here a top-level @anthropic-ai/sdk client with
// the replay fetch); the OpenAI and Google providers build their nested SDK clients per
// call and read globalThis.fetch, swapped for the duration of one run (runs never overlap
// in one process). Its Bedrock provider uses the AWS SDK's Node HTTP handler, which takes
// no fetch: it is pointed at a loopback HTTP server on 127.0.0.1 that answers with the
// recorded response, one write per chunk (TCP may merge neighbouring chunks: the split is
// what the client reads, not guaranteed to be exact).
import { createServer } from 'node:http';
import { pkgVersion, raisedOf, replayFetch, serveHeaders, serveProtocol, versions } from '../lib/protocol.mjs';
import { piMessage } from '../lib/pi-ai.mjs';

const { stream } = await import('@mariozechner/pi-ai');
const { default: Anthropic } = await import('@anthropic-ai/sdk');

const PROVIDERS = {
  'anthropic-messages': ['anthropic', 'http://harness.invalid'],
  'openai-completions': ['openai', 'http://harness.invalid/v1'],
  'openai-responses': ['openai', 'http://harness.invalid/v1'],
  'google-generative-ai': ['google', 'http://harness.invalid/v1beta'],
  'bedrock-converse-stream': ['amazon-bedrock', null],
};

process.env.AWS_BEDROCK_SKIP_AUTH = '1';
process.env.AWS_BEDROCK_FORCE_HTTP1 = '1';
// One attempt, as every other adapter runs its library (maxRetries 0): pi passes no retry
// option to the AWS client, whose standard strategy reads this variable.
process.env.AWS_MAX_ATTEMPTS = '1';

/** A loopback server answering every request with the recorded response; its base URL. */
async function loopback(chunks, status, headers, calls) {
  const server = createServer((req, res) => {
    calls.n++;
    req.resume();
    req.on('end', () => {
      res.writeHead(status, Object.fromEntries(headers.map(([k, v]) => [k, v])));
      let i = 0;
      const next = () => (i < chunks.length ? res.write(chunks[i++], () => setImmediate(next)) : res.end());
      next();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

function model(protocol, loopbackUrl = null) {
  const [provider, fixed] = PROVIDERS[protocol];
  const baseUrl = fixed ?? loopbackUrl;
  return {
    id: 'harness-model', name: 'harness-model', api: protocol, provider, baseUrl, reasoning: false,
    input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 200000, maxTokens: 1024,
  };
}

await serveProtocol({
  implementation: {
    name: 'js-pi-ai', version: pkgVersion('@mariozechner/pi-ai'),
    libraries: versions({
      '@mariozechner/pi-ai': '@mariozechner/pi-ai',
      '@anthropic-ai/sdk (the client passed to pi)': '@anthropic-ai/sdk',
      'openai (nested in @mariozechner/pi-ai)': '@mariozechner/pi-ai/node_modules/openai',
      '@google/genai (nested in @mariozechner/pi-ai)': '@mariozechner/pi-ai/node_modules/@google/genai',
      '@anthropic-ai/sdk (nested in @mariozechner/pi-ai)': '@mariozechner/pi-ai/node_modules/@anthropic-ai/sdk',
      '@aws-sdk/client-bedrock-runtime': '@aws-sdk/client-bedrock-runtime',
    }),
    homepage: 'https://github.com/badlogic/pi-mono', issues: 'https://github.com/badlogic/pi-mono/issues',
  },
  protocols: Object.keys(PROVIDERS),
  async run(protocol, chunks, status, headers) {
    const calls = { n: 0 };
    const fetch = replayFetch(chunks, status, serveHeaders(status, headers), calls);
    const options = { apiKey: 'test', maxRetries: 0 };
    let served = null;
    if (protocol === 'bedrock-converse-stream') {
      served = await loopback(chunks, status, serveHeaders(status, headers, 'application/vnd.amazon.eventstream'), calls);
      options.region = 'us-east-1';
    }
    if (protocol === 'anthropic-messages') options.client = new Anthropic({ apiKey: 'test', baseURL: 'http://harness.invalid', fetch, maxRetries: 0 });
    const saved = globalThis.fetch;
    globalThis.fetch = fetch;
    try {
      const s = stream(model(protocol, served?.url), { messages: [{ role: 'user', content: 'hi', timestamp: 0 }] }, options);
      for await (const _event of s) { /* the events are pi's; the result is read below */ }
      return { message: piMessage(await s.result()), requests: calls.n };
    } catch (err) {
      return { raised: raisedOf(err), requests: calls.n };
    } finally {
      globalThis.fetch = saved;
      if (served) { served.server.closeAllConnections?.(); served.server.close(); }
    }
  },
});
