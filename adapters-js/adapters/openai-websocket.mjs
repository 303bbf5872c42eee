// openai (node): the Responses API's WebSocket mode, `new ResponsesWS(client)` from
// `openai/resources/responses/ws`, as its users read a turn: send `response.create`, iterate
// `stream()` to the turn's terminal event. Each run plays the case's turn (its frame log,
// specs/protocols/openai-responses-websocket.md) on a loopback WebSocket server made with `ws`
// (the library the SDK's Node transport runs on): continuation frames as recorded, a close
// frame with its code, a dropped socket where the recording lost it. The terminal event's
// `response` is mapped as the js-openai adapter maps a Response (the SDK keeps no snapshot).
import { WebSocketServer } from 'ws';
import { pkgVersion, raisedOf, serveProtocol } from '../lib/protocol.mjs';
import { responsesMessage } from '../lib/openai-responses.mjs';

const { default: OpenAI } = await import('openai');
const { ResponsesWS } = await import('openai/resources/responses/ws');

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.cancelled']);
const UNSENDABLE = new Set([1005, 1006, 1015]);

function frames(body) {
  const out = [];
  for (const line of body.toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    try { out.push(JSON.parse(line)); } catch { /* the reference reports a broken line */ }
  }
  return out;
}

const payload = (f) => (typeof f.data === 'string' ? Buffer.from(f.data, 'utf8') : Buffer.from(f.base64 ?? '', 'base64'));

function endsTurn(message) {
  try { const v = JSON.parse(message.toString('utf8')); return TERMINAL.has(v.type) || v.type === 'error'; } catch { return false; }
}

/** Play one turn's frames to the first client that connects and speaks. */
function playTurn(log) {
  return new Promise((resolve) => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    server.on('connection', (sock) => {
      sock.once('message', () => {
        let last = Buffer.alloc(0);
        for (const f of frames(log)) {
          if ((f.dir ?? 'server') === 'client' || f.op === 'ping' || f.op === 'pong') continue;
          if (f.op === 'close') {
            if (!Number.isInteger(f.code) || UNSENDABLE.has(f.code)) sock.terminate();
            else sock.close(f.code, f.reason ?? '');
            return;
          }
          const fin = f.fin !== false;
          const data = payload(f);
          last = f.op === 'continuation' ? Buffer.concat([last, data]) : data;
          sock.send(data, { binary: f.op === 'binary', fin });
        }
        if (!endsTurn(last)) sock.terminate(); // the recording lost the connection here
      });
    });
    server.on('listening', () => resolve(server));
  });
}

async function turn(chunks) {
  const server = await playTurn(Buffer.concat(chunks));
  const port = server.address().port;
  const seen = [];
  let rws;
  try {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    rws = new ResponsesWS(client);
    rws.send({ type: 'response.create', model: 'gpt-harness', input: 'hi' });
    for await (const record of rws.stream()) {
      if (record.type === 'message') {
        const event = record.message;
        seen.push(event.type);
        if (TERMINAL.has(event.type)) return { message: responsesMessage(event.response), raw: { events: seen } };
        if (event.type === 'error') {
          const text = event.error?.message ?? event.message ?? 'error event';
          return { raised: { name: 'ErrorEvent', message: text }, raw: { events: seen } };
        }
      } else if (record.type === 'error') {
        return { raised: raisedOf(record.error), raw: { events: seen } };
      } else if (record.type === 'close') {
        // The SDK reports a close as a lifecycle record with its code, not as an error: its
        // user is told the connection ended, and that a turn was in flight is theirs to see.
        const note = `the connection closed (code ${record.code ?? 'none'}) before the turn's terminal event`;
        return { raised: { name: 'WebSocketClose', message: note }, raw: { events: seen, close: record.code ?? null, surfaced_as: 'close record' } };
      }
    }
    return { raised: { name: 'IteratorEnded', message: 'the iterator ended without a terminal event' }, raw: { events: seen } };
  } catch (err) {
    return { raised: raisedOf(err), raw: { events: seen } };
  } finally {
    try { rws?.close({ code: 1000, reason: 'done' }); } catch { /* already closed */ }
    for (const c of server.clients) c.terminate();
    server.close();
  }
}

// --- several turns on one connection (the session checks) ---------------------------------
// The user's part, which the SDK leaves to its user: chain a continuing turn with the id of
// the response the previous turn ended with (harness/stream_harness/adapters/ws_session.py,
// ChainState.request); previous_response_not_found is not answered (a convention, as for the
// Python SDK row).
async function session(protocol, baseUrl, turns) {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  const rws = new ResponsesWS(client);
  const records = rws.stream(); // one iterator for the connection: nothing is missed between turns
  const results = [];
  let lastId = null;
  try {
    for (const turn of turns) {
      const event = { type: 'response.create', ...turn.create };
      if (turn.chained && lastId !== null) event.previous_response_id = lastId;
      rws.send(event);
      const seen = [];
      let result = null;
      while (result === null) {
        const { value: record, done } = await records.next();
        if (done) { result = { raised: { name: 'IteratorEnded', message: 'the iterator ended without a terminal event' }, raw: { events: seen } }; break; }
        if (record.type === 'message') {
          const ev = record.message;
          seen.push(ev.type);
          if (TERMINAL.has(ev.type)) {
            if (ev.type === 'response.completed' && typeof ev.response?.id === 'string') lastId = ev.response.id;
            result = { message: responsesMessage(ev.response), raw: { events: seen } };
          } else if (ev.type === 'error') {
            result = { raised: { name: 'ErrorEvent', message: ev.error?.message ?? ev.message ?? 'error event' }, raw: { events: seen } };
          }
        } else if (record.type === 'error') {
          result = { raised: raisedOf(record.error), raw: { events: seen } };
        } else if (record.type === 'close') {
          const note = `the connection closed (code ${record.code ?? 'none'}) before the turn's terminal event`;
          result = { raised: { name: 'WebSocketClose', message: note }, raw: { events: seen, close: record.code ?? null, surfaced_as: 'close record' } };
        }
      }
      results.push(result);
      if (result.raw?.close !== undefined || result.raised?.name === 'IteratorEnded') break;
    }
  } finally {
    try { rws.close({ code: 1000, reason: 'done' }); } catch { /* already closed */ }
  }
  return results;
}

await serveProtocol({
  implementation: {
    name: 'js-openai-websocket', version: pkgVersion('openai'), libraries: { openai: pkgVersion('openai'), ws: pkgVersion('ws') },
    homepage: 'https://github.com/openai/openai-node', issues: 'https://github.com/openai/openai-node/issues',
  },
  protocols: ['openai-responses-websocket'],
  run: (protocol, chunks) => turn(chunks),
  session,
});
