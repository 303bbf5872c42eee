// The stdio adapter protocol (specs/adapter-protocol.md) for Node: everything an adapter
// shares, so that each adapter file is only "drive the library, describe what it gave".
//
// Console output is moved to stderr *before* any library is imported (libraries such as
// @langchain/openai warn with console.log), and the protocol writes through the saved
// stdout writer, so a library can never corrupt the JSON-lines stream.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real stdout writer: protocol lines only (everything else printed goes to stderr). */
export const writeOut = process.stdout.write.bind(process.stdout);
for (const level of ['log', 'info', 'debug', 'warn', 'trace']) {
  console[level] = (...args) => process.stderr.write(args.map(String).join(' ') + '\n');
}
process.stdout.write = (chunk, ...rest) => process.stderr.write(chunk, ...rest);
// Warnings such as EBADENGINE-era deprecations go to stderr too (Node's default), never stdout.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The version of an installed package, read from its package.json (nested path allowed). */
export function pkgVersion(path) {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', path, 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
}

/** `{name: version}` of the given packages, skipping any not installed. */
export function versions(names) {
  const out = {};
  for (const [label, path] of Object.entries(names)) {
    const v = pkgVersion(path);
    if (v) out[label] = v;
  }
  return out;
}

/** The chunks a `run` asks for: `{every: n}` or `{cuts: [...]}` over the decoded body. */
export function cut(body, split) {
  const chunks = [];
  if (split.every !== undefined) {
    for (let i = 0; i < body.length; i += split.every) chunks.push(body.subarray(i, i + split.every));
  } else {
    const bounds = [0, ...split.cuts, body.length];
    for (let i = 0; i + 1 < bounds.length; i++) chunks.push(body.subarray(bounds[i], bounds[i + 1]));
  }
  return chunks.filter((c) => c.length > 0);
}

const DROP = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'connection']);

/** The response headers to serve: recorded pairs, plus a content type the recorder may have stripped. */
export function serveHeaders(status, headers, fallbackType = 'text/event-stream') {
  const pairs = headers.filter(([k]) => !DROP.has(k.toLowerCase()));
  if (!pairs.some(([k]) => k.toLowerCase() === 'content-type')) {
    pairs.push(['content-type', status >= 400 ? 'application/json' : fallbackType]);
  }
  return pairs;
}

/**
 * A `fetch` answering every request with the recorded response, one chunk per read.
 * `calls.n` counts the requests (a retry or a second step shows in the reply); `calls.urls`,
 * when given, receives each request's URL.
 */
export function replayFetch(chunks, status, headers, calls = { n: 0 }) {
  return async (input, _init) => {
    calls.n++;
    // The URLs asked for, when the caller keeps a list: the Vertex adapters show with them
    // that the library took its Vertex code path (tests/adapters/test_js_adapters.py).
    calls.urls?.push(String(input?.url ?? input));
    let i = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (i < chunks.length) controller.enqueue(new Uint8Array(chunks[i++]));
        else controller.close();
      },
    });
    return new Response(status === 204 || status === 304 ? null : body, { status, headers });
  };
}

/** `{name, message, status}` for a thrown value: the provider's message where the library kept it. */
export function raisedOf(err, message) {
  const name = (err && (err.constructor?.name !== 'Object' ? err.constructor?.name : null)) || err?.name || 'Error';
  const status = typeof err?.status === 'number' ? err.status : (typeof err?.statusCode === 'number' ? err.statusCode : null);
  return { name, message: message ?? providerMessage(err), status };
}

/** The provider's error message from a library error, else the error's own text. */
export function providerMessage(err) {
  const candidates = [
    err?.error?.error?.message, err?.error?.message, err?.body?.error?.message,
    err?.data?.error?.message, err?.responseBody && safeJson(err.responseBody)?.error?.message,
  ];
  for (const c of candidates) if (typeof c === 'string' && c) return c;
  // @google/genai's ApiError message is the error body as JSON, whose message is the
  // provider's body as JSON again: the innermost message is the provider's.
  let inner = safeJson(err?.message);
  for (let depth = 0; inner && depth < 3; depth++) {
    const m = inner?.error?.message ?? inner?.message;
    if (typeof m !== 'string') break;
    const next = safeJson(m);
    if (!next) return m;
    inner = next;
  }
  const text = String(err?.message ?? err ?? '');
  return text || err?.name || 'Error';
}

function safeJson(text) {
  try { return JSON.parse(text); } catch { return null; }
}

/** JSON with no undefined members and no BigInt surprises. */
export function dumps(obj) {
  return JSON.stringify(obj, (_k, v) => (typeof v === 'bigint' ? Number(v) : v));
}

/**
 * Serve the protocol: `adapter` is `{implementation, protocols, surface, run(protocol, chunks, status, headers)}`.
 * `run` returns a reply without `seq` (`{message}`, `{events}`, `{raised, message?}`); anything it throws
 * is the adapter's own bug and becomes `errored`.
 */
export async function serveProtocol(adapter) {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line);
    if (msg.cmd === 'stop') break;
    if (msg.cmd === 'start') {
      writeOut(dumps({
        version: 1,
        implementation: { language: 'javascript', runtime: `node ${process.version}`, ...adapter.implementation },
        protocols: adapter.protocols,
        surface: adapter.surface ?? 'message',
        ...(adapter.session ? { sessions: true } : {}),
      }) + '\n');
      continue;
    }
    if (msg.cmd === 'session' && adapter.session) {
      // Several WebSocket turns on one connection: one result a turn (specs/adapter-protocol.md).
      const { protocol, base_url: baseUrl, turns } = msg.session;
      let reply;
      try {
        reply = { results: await adapter.session(protocol, baseUrl, turns) };
      } catch (err) {
        reply = { results: [{ errored: { message: `${err?.name ?? 'Error'}: ${err?.message ?? err}`, traceback: String(err?.stack ?? '') } }] };
      }
      writeOut(dumps({ seq: msg.seq, ...reply }) + '\n');
      continue;
    }
    if (msg.cmd !== 'run') continue;
    const { protocol, status, headers, body, split } = msg.case;
    const chunks = cut(Buffer.from(body, 'base64'), split);
    let reply;
    try {
      reply = await adapter.run(protocol, chunks, status, headers);
    } catch (err) {
      reply = { errored: { message: `${err?.name ?? 'Error'}: ${err?.message ?? err}`, traceback: String(err?.stack ?? '') } };
    }
    writeOut(dumps({ seq: msg.seq, ...reply }) + '\n');
  }
  process.exit(0);
}

// --- helpers for building the `message` reply -------------------------------------------

export const text = (content, signature = null) => ({ type: 'text', content, signature });
export const thinking = (content, signature = null, redacted = false) => ({ type: 'thinking', content, signature, redacted });
// Arguments are an object or the string the library gave; anything else (an array, a
// number) is passed on as its JSON text, which the harness keeps as {"_raw": ...}.
const argsOf = (args) => (args == null ? {} : (typeof args === 'string' || (typeof args === 'object' && !Array.isArray(args)) ? args : JSON.stringify(args)));
export const toolCall = (id, name, args) => ({ type: 'tool_call', id: id ?? null, name: name ?? '', arguments: argsOf(args) });

/** A non-negative integer counter (the schema wants one), else 0. */
export const count = (v) => (Number.isInteger(v) && v >= 0 ? v : 0);
