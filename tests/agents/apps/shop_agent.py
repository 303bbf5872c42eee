"""A small shop agent on the official openai client, as a user writes it (no harness code
but the one-line reports of its tools). SHOP_AGENT_BUG plants one of five bugs, each of
which a built-in check must catch (tests/agents/test_app_mode.py)."""

import json
import os
import sys

import openai

from stream_harness.agents import record_tool_run, side_effect

BUG = os.environ.get("SHOP_AGENT_BUG", "")
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "issue_payment",
            "description": "Charge the customer.",
            "parameters": {
                "type": "object",
                "properties": {"customer": {"type": "string"}, "amount_cents": {"type": "integer"}},
                "required": ["customer", "amount_cents"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "forecast",
            "description": "The weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
]


@side_effect
def issue_payment(customer: str, amount_cents: int) -> dict:
    return {"paid": amount_cents, "customer": customer}


def forecast(city: str) -> dict:
    record_tool_run("forecast", {"city": city})
    return {"city": city, "sky": "cloudy"}


def turn(client: openai.OpenAI, messages: list) -> tuple[str, list, str | None]:
    text, calls, finish = "", {}, None
    try:
        for chunk in client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=TOOLS, stream=True
        ):
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for d in choice.delta.tool_calls or ():
                    call = calls.setdefault(d.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] += d.id or ""
                    call["name"] += (d.function and d.function.name) or ""
                    call["arguments"] += (d.function and d.function.arguments) or ""
                finish = choice.finish_reason or finish
    except Exception:
        if BUG != "cut_args" or not calls:
            raise
        finish = "tool_calls"  # bug: run what arrived of the calls
    if finish is None and BUG != "no_finish":
        raise ConnectionError("the stream ended without a finish_reason")
    return text, list(calls.values()), finish


def run_tools(calls: list, messages: list) -> None:
    for c in calls:
        args = json.loads(c["arguments"] or "{}") if BUG != "cut_args" else _lenient(c["arguments"])
        result = {"issue_payment": issue_payment, "forecast": forecast}[c["name"]](**args)
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(result)})


def _lenient(text: str) -> dict:
    for tail in ("", "}", '"}', "0}"):
        try:
            return json.loads(text + tail)
        except ValueError:
            pass
    return {}


def main(prompt: str) -> int:
    client = openai.OpenAI(max_retries=0 if BUG == "no_retry_after" else 2)
    messages: list = [{"role": "user", "content": prompt}]
    last_calls: list = []
    for _ in range(12):
        for attempt in range(3):
            try:
                text, calls, _ = turn(client, messages)
                break
            except openai.BadRequestError:
                if BUG != "retry_400" or attempt == 2:
                    raise
            except openai.RateLimitError:
                if BUG != "no_retry_after" or attempt == 2:
                    raise  # bug: the SDK's retries are off and this loop retries at once
            except (openai.APIConnectionError, ConnectionError, openai.APIError) as exc:
                if isinstance(exc, openai.APIStatusError):
                    raise  # the client retried what is retryable already
                if attempt == 2:
                    raise
                if BUG == "double_charge":
                    run_tools(last_calls, [])  # bug: the failed step is replayed, tools and all
        if not calls:
            print(text)
            return 0
        messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in calls
                ],
            }
        )
        run_tools(calls, messages)
        last_calls = calls
    print("too many steps", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.environ["STREAM_HARNESS_PROMPT"]))
