"""A dual-era MCP server on the official Python SDK (``mcp`` 2.3.0), for the interop tests.

Run it with the Python of the peers' virtualenv (``peers.json`` names it)::

    .peers/venv/bin/python tests/interop/servers/sdk_server.py

The SDK fixes the era of a connection on its first request: a request that
carries the 2026-07-28 ``_meta`` envelope (``server/discover`` or any other)
makes it modern, ``initialize`` makes it legacy.

What it offers, in both eras unless said otherwise:

* tools ``echo``, ``add`` and ``forecast`` (structured output, with an
  ``outputSchema``), ``fail`` (a tool error), ``route`` (its ``region``
  argument is an ``x-mcp-header``: 2026-07-28 requests carry it as
  ``Mcp-Param-Region``, which the SDK checks),
  ``slow`` (progress with a message), ``log_demo`` (one log line at each of
  four levels), ``touch`` (resource updated and list changed notifications);
* tools that need input from the client: ``greet`` (elicitation),
  ``summarize`` (sampling), ``pick_tool`` (sampling that offers the model a
  tool, ``calc``, and requires its use: the client must declare
  ``sampling.tools``), ``list_roots`` (roots) and ``two_questions`` (two
  elicitations). The SDK's resolver asks through an ``input_required`` result
  in the modern era and through a request to the client in the legacy era;
* ``counter`` (modern only): ``input_required`` rounds that carry only a
  ``requestState`` and no question;
* a static resource ``test://static/readme``, a template
  ``test://items/{item_id}``, a prompt ``review``, and completion for the
  prompt's ``language`` and the template's ``item_id``;
* a resource template ``test://vault/{key}`` and a prompt ``unlock`` that ask
  for a password first (an ``input_required`` result in the modern era, an
  ``elicitation/create`` request in the legacy era);
* legacy only: ``logging/setLevel`` (it filters what ``log_demo`` sends) and
  ``resources/subscribe`` / ``resources/unsubscribe`` (``touch`` sends
  ``notifications/resources/updated`` only for a subscribed URI).
"""

from __future__ import annotations

import json
import warnings
from typing import Annotated

import anyio
import mcp_types as t
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from pydantic import BaseModel, Field

# Logging, sampling and roots are deprecated in 2026-07-28; they are exactly
# what this server is for, so keep the warnings off stderr.
warnings.simplefilter("ignore", MCPDeprecationWarning)

MODERN = "2026-07-28"
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

server = MCPServer(
    name="trio-mcp-test-server",
    version="1.0.0",
    instructions="A test server for the trio_mcp interop tests.",
    log_level="WARNING",
)

# Legacy connection state (one connection per process).
_legacy = {"level": "debug", "subscribed": set()}


def _modern(ctx: Context) -> bool:
    return ctx.protocol_version == MODERN


# ---------------------------------------------------------------- plain tools


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], text: str) -> str:
    """Say where the call was routed: ``region`` also travels as the ``Mcp-Param-Region`` header (2026-07-28)."""
    return f"{region}: {text}"


class Forecast(BaseModel):
    city: str
    temperature: float
    conditions: str
    readings: list[int]


@server.tool()
def forecast(city: str) -> Forecast:
    """A weather forecast, as structured output (its outputSchema is the model's JSON Schema)."""
    return Forecast(city=city, temperature=21.5, conditions="sunny", readings=[18, 21, 24])


@server.tool()
def fail(message: str = "it failed") -> str:
    """Raise, so that the call ends in a tool error (isError)."""
    raise ToolError(message)


@server.tool()
async def slow(ctx: Context, steps: int = 3, delay: float = 0.05) -> str:
    """Sleep steps times delay seconds, reporting progress with a message after each step."""
    for step in range(1, steps + 1):
        await anyio.sleep(delay)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"slept {steps} steps"


@server.tool()
async def log_demo(ctx: Context) -> str:
    """Log one line at debug, info, warning and error (the error's data is an object)."""
    floor = LEVELS.index(_legacy["level"])
    for level, data in (
        ("debug", "debug line"),
        ("info", "info line"),
        ("warning", "warning line"),
        ("error", {"line": "error line", "code": 7}),
    ):
        # Modern: the SDK itself drops what the request's logLevel excludes.
        if _modern(ctx) or LEVELS.index(level) >= floor:
            await ctx.log(level, data, logger_name="log_demo")
    return "logged"


@server.tool()
async def touch(ctx: Context, uri: str = "test://static/readme") -> str:
    """Announce a change to the resource at uri and to the tool, prompt and resource lists.

    Modern: to every subscriptions/listen stream whose filter asks for it.
    Legacy: notifications/resources/updated, if uri was subscribed to.
    """
    if _modern(ctx):
        await ctx.notify_resource_updated(uri)
        await ctx.notify_tools_changed()
        await ctx.notify_prompts_changed()
        await ctx.notify_resources_changed()
    elif uri in _legacy["subscribed"]:
        await ctx.session.send_resource_updated(uri)
    return f"touched {uri}"


# ------------------------------------------- tools that ask the client (resolver)


class Person(BaseModel):
    name: str


class Confirmation(BaseModel):
    ok: bool


def ask_name() -> Elicit[Person]:
    return Elicit("What is your name?", Person)


def ask_confirmation() -> Elicit[Confirmation]:
    return Elicit("Shall I go on?", Confirmation)


def ask_model() -> Sample:
    prompt = t.SamplingMessage(
        role="user", content=t.TextContent(type="text", text="Summarize: trio is nice")
    )
    return Sample([prompt], max_tokens=32, system_prompt="Be brief.")


CALC = t.Tool(
    name="calc",
    description="Adds two numbers.",
    input_schema={"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
)


def ask_model_with_tools() -> Sample:
    prompt = t.SamplingMessage(role="user", content=t.TextContent(type="text", text="What is 2+2?"))
    return Sample([prompt], max_tokens=32, tools=[CALC], tool_choice=t.ToolChoice(mode="required"))


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def greet(person: Annotated[Person, Resolve(ask_name)]) -> str:
    """Ask the user for a name (elicitation), then greet them."""
    return f"Hello, {person.name}!"


@server.tool()
def summarize(reply: Annotated[t.CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's model for a summary (sampling)."""
    content = reply.content
    text = content.text if isinstance(content, t.TextContent) else repr(content)
    return f"{reply.model} says: {text}"


@server.tool()
def pick_tool(reply: Annotated[t.CreateMessageResultWithTools, Resolve(ask_model_with_tools)]) -> str:
    """Offer the client's model the calc tool (sampling with tools); return the calls it asked for, as JSON."""
    blocks = reply.content if isinstance(reply.content, list) else [reply.content]
    uses = [{"id": b.id, "name": b.name, "input": b.input} for b in blocks if isinstance(b, t.ToolUseContent)]
    return json.dumps({"model": reply.model, "stop_reason": reply.stop_reason, "uses": uses})


@server.tool()
def list_roots(result: Annotated[t.ListRootsResult, Resolve(ask_roots)]) -> str:
    """Return the client's roots as a JSON list of URIs."""
    return json.dumps([str(root.uri) for root in result.roots])


@server.tool()
def two_questions(
    person: Annotated[Person, Resolve(ask_name)],
    confirmation: Annotated[Confirmation, Resolve(ask_confirmation)],
) -> str:
    """Ask two questions (both in one input_required result in the modern era)."""
    return f"{person.name} said ok={confirmation.ok}"


@server.tool()
def counter(ctx: Context, rounds: int = 2) -> str | t.InputRequiredResult:
    """Modern only: answer input_required with only a requestState, rounds times, then finish."""
    if not _modern(ctx):
        raise ToolError("counter needs the 2026-07-28 protocol")
    done = int(ctx.request_state or "0")
    if done < rounds:
        return t.InputRequiredResult(request_state=str(done + 1))
    return f"finished after {done} retries"


# ------------------------------------------------------ resources and prompts


@server.resource("test://static/readme", name="readme", mime_type="text/plain")
def readme() -> str:
    """A static text resource."""
    return "This is the readme."


@server.resource("test://items/{item_id}", name="item", mime_type="text/plain")
def item(item_id: str) -> str:
    """One item, by id."""
    return f"item number {item_id}"


@server.prompt()
def review(code: str, language: str = "python") -> str:
    """Ask for a code review."""
    return f"Please review this {language} code:\n{code}"


class Password(BaseModel):
    password: str


async def _password(ctx: Context, message: str) -> str | t.InputRequiredResult:
    """The password the user gave, or (modern era, first round) the question for it."""
    if not _modern(ctx):
        answer = await ctx.elicit(message, Password)
        if answer.action != "accept":
            raise ValueError(f"no password ({answer.action})")
        return answer.data.password
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.elicitation is None:
        raise MCPError(
            code=t.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="this needs the elicitation capability",
            data={"requiredCapabilities": {"elicitation": {"form": {}}}},
        )
    response = (ctx.input_responses or {}).get("password")
    if response is None:
        schema = {"type": "object", "properties": {"password": {"type": "string"}}, "required": ["password"]}
        question = t.ElicitRequest(params=t.ElicitRequestFormParams(message=message, requested_schema=schema))
        return t.InputRequiredResult(input_requests={"password": question})
    if getattr(response, "action", None) != "accept" or not getattr(response, "content", None):
        raise ValueError("no password")
    return str(response.content["password"])


@server.resource("test://vault/{key}", name="vault", mime_type="text/plain")
async def vault(key: str, ctx: Context) -> str | t.InputRequiredResult:
    """A secret that needs a password first."""
    password = await _password(ctx, f"Password for {key}?")
    if isinstance(password, t.InputRequiredResult):
        return password
    return f"secret {key}, opened with {password}"


@server.prompt()
async def unlock(topic: str, ctx: Context) -> str | t.InputRequiredResult:
    """A prompt that needs a password first."""
    password = await _password(ctx, f"Password for the prompt about {topic}?")
    if isinstance(password, t.InputRequiredResult):
        return password
    return f"Talk about {topic}; the password was {password}"


@server.completion()
async def complete(ref, argument, context):
    if argument.name == "language":
        values = [v for v in ("python", "perl", "php", "rust", "ruby") if v.startswith(argument.value)]
        return t.Completion(values=values, total=len(values), has_more=False)
    if argument.name == "item_id":
        return t.Completion(values=[v for v in ("1", "2", "3", "10") if v.startswith(argument.value)])
    return None


# ------------------------------------------------------- legacy-only methods


async def set_level(ctx, params: t.SetLevelRequestParams) -> t.EmptyResult:
    _legacy["level"] = params.level
    return t.EmptyResult()


async def subscribe(ctx, params: t.SubscribeRequestParams) -> t.EmptyResult:
    _legacy["subscribed"].add(str(params.uri))
    return t.EmptyResult()


async def unsubscribe(ctx, params: t.UnsubscribeRequestParams) -> t.EmptyResult:
    _legacy["subscribed"].discard(str(params.uri))
    return t.EmptyResult()


_lowlevel = server._lowlevel_server
_lowlevel.add_request_handler("logging/setLevel", t.SetLevelRequestParams, set_level)
_lowlevel.add_request_handler("resources/subscribe", t.SubscribeRequestParams, subscribe)
_lowlevel.add_request_handler("resources/unsubscribe", t.UnsubscribeRequestParams, unsubscribe)

if __name__ == "__main__":
    server.run("stdio")
