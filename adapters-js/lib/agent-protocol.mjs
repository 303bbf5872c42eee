// The agent messages of the stdio protocol (specs/adapter-protocol.md, "Agent runs") for
// Node: everything a JS agent adapter shares, so that each file in adapters-js/agents/ is
// only "build the library's agent from the task, run it once, say how it ended".
//
// Importing protocol.mjs first moves console output to stderr before any library loads,
// so a framework that logs with console.log never corrupts the JSON-lines stream.
import { createInterface } from 'node:readline';
import { dumps, pkgVersion, raisedOf, writeOut } from './protocol.mjs';

/**
 * The error's `cause` chain, as a stack trace shows it: the AI SDK's "Failed to process
 * successful response" is caused by undici's "terminated" (caused by "SocketError: other
 * side closed") when the connection dropped, and A12 asks that the outcome say what
 * happened (specs/agent-contract.md). An error that wraps its attempts instead of a cause,
 * the AI SDK's RetryError once retries are spent, is followed to its last attempt
 * (`lastError`, else the last of `errors`): the failure that ended the run. The earlier
 * attempts are left out, so the outcome names only what the last response served.
 */
export function causesOf(err) {
  const out = [];
  const seen = new Set([err]);
  for (let c = nextCause(err); c && !seen.has(c) && out.length < 5; c = nextCause(c)) {
    seen.add(c);
    const r = raisedOf(c);
    out.push(`${r.name}: ${r.message}`);
  }
  return out.length ? ` (caused by ${out.join('; caused by ')})` : '';
}

/**
 * What `err` wraps: its `cause`, else the last attempt of a retry wrapper. Only an Error
 * counts as an attempt: a validation error's `errors` (zod's issues) are not failures.
 */
function nextCause(err) {
  if (err === null || typeof err !== 'object') return undefined;
  if (err.cause) return err.cause;
  const last = err.lastError ?? (Array.isArray(err.errors) ? err.errors.at(-1) : undefined);
  return last instanceof Error ? last : undefined;
}

export const AGENT_PROTOCOL_VERSION = 1;

/** A scripted tool failure, as the framework's tool function sees it: an ordinary Error. */
export class ToolFailed extends Error {
  constructor(message) {
    super(message);
    this.name = 'ToolFailed';
  }
}

/**
 * Execute `tool` (one entry of `task.tools`) through the scenario server's ledger, which
 * records the execution and answers with the scripted result: the result as text (JSON
 * unless a string). A scripted failure throws ToolFailed. The same contract as the Python
 * AgentTool.call, so that every language's tools are observed the same way.
 */
export async function callLedger(tool, args, { timeoutMs = 30000 } = {}) {
  const response = await fetch(tool.ledger_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tool: tool.name, arguments: args ?? {} }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new ToolFailed(`ledger refused the call: HTTP ${response.status}`);
  let answer = {};
  try {
    answer = await response.json();
  } catch {
    answer = {};
  }
  if (answer && 'error' in answer) throw new ToolFailed(String(answer.error));
  const result = answer?.result;
  return typeof result === 'string' ? result : JSON.stringify(result ?? null);
}

/** The server root plus what an OpenAI client expects (`/v1`). */
export const openaiBase = (task) => `${task.base_url.replace(/\/$/, '')}/v1`;

/**
 * Serve the agent messages. `agent` is
 * `{name, framework: {label: 'node_modules/path'}, protocols, conventions?, settings, run(task)}`:
 * `run` resolves to the final text the framework handed its user (or `{output, raw}`) and
 * throws what the framework raised; both become one `agent_outcome`. The framework's own
 * exceptions are outcomes, never a crash of the process: only a hang or an exit is.
 */
export async function serveAgent(agent) {
  process.on('unhandledRejection', (err) => {
    process.stderr.write(`unhandled rejection: ${err?.stack ?? err}\n`);
  });
  const [label, path] = Object.entries(agent.framework)[0];
  const frameworkVersion = pkgVersion(path);
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      process.stderr.write(`not JSON: ${line.slice(0, 120)}\n`);
      continue;
    }
    if (msg.cmd === 'stop') break;
    if (msg.cmd === 'agent_start') {
      writeOut(dumps({
        kind: 'agent_started',
        version: AGENT_PROTOCOL_VERSION,
        name: agent.name,
        ...(frameworkVersion ? { framework_version: `${label} ${frameworkVersion}` } : {}),
        protocols: agent.protocols,
        ...(agent.conventions ? { conventions: agent.conventions } : {}),
        settings: `${agent.settings ?? ''} (node ${process.version})`.trim(),
      }) + '\n');
      continue;
    }
    if (msg.cmd === 'agent_run') {
      let reply;
      try {
        const result = await agent.run(msg.task);
        const output = typeof result === 'object' && result !== null && 'output' in result ? result.output : result;
        reply = {
          output: output === undefined || output === null ? null : String(output),
          ...(result?.raw ? { raw: result.raw } : {}),
        };
      } catch (err) {
        const raised = raisedOf(err);
        reply = { output: null, error_type: raised.name, error_message: raised.message + causesOf(err) };
      }
      writeOut(dumps({ kind: 'agent_outcome', seq: msg.seq, ...reply }) + '\n');
    }
  }
  process.exit(0);
}
