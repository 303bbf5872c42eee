// The shop agent in JavaScript on the official openai-node client, unchanged for app mode:
// OPENAI_BASE_URL / OPENAI_API_KEY point it at the scenario server, the prompt is in
// STREAM_HARNESS_PROMPT, and each tool run is the documented POST to STREAM_HARNESS_LEDGER_URL.
// Run with NODE_PATH naming a folder holding node_modules/openai (tests/agents/test_app_mode.py).
import { createRequire } from "node:module";
const OpenAI = createRequire(process.env.NODE_PATH + "/")("openai").default;

const tools = [
  { type: "function", function: { name: "send_payment", description: "Pay a customer.",
    parameters: { type: "object", properties: { to: { type: "string" }, cents: { type: "integer" } }, required: ["to", "cents"] } } },
  { type: "function", function: { name: "city_weather", description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
];

async function report(name, args) {
  const ledger = process.env.STREAM_HARNESS_LEDGER_URL;
  if (ledger) await fetch(ledger, { method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ tool: name, arguments: args }) });
}

const client = new OpenAI();
const messages = [{ role: "user", content: process.env.STREAM_HARNESS_PROMPT }];
for (let step = 0; step < 10; step++) {
  let text = "", finish = null;
  const calls = [];
  const stream = await client.chat.completions.create({ model: "gpt-4o-mini", messages, tools, stream: true });
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      text += choice.delta?.content ?? "";
      for (const d of choice.delta?.tool_calls ?? []) {
        calls[d.index] ??= { id: "", name: "", arguments: "" };
        calls[d.index].id += d.id ?? "";
        calls[d.index].name += d.function?.name ?? "";
        calls[d.index].arguments += d.function?.arguments ?? "";
      }
      finish = choice.finish_reason ?? finish;
    }
  }
  if (finish === null) throw new Error("the stream ended without a finish_reason");
  if (calls.length === 0) { console.log(text); process.exit(0); }
  messages.push({ role: "assistant", content: text || null, tool_calls: calls.map((c) => (
    { id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) });
  for (const c of calls) {
    const args = JSON.parse(c.arguments);
    await report(c.name, args);
    messages.push({ role: "tool", tool_call_id: c.id, content: JSON.stringify({ ok: true }) });
  }
}
process.exit(1);
