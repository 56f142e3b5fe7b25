"""Pydantic AI's own examples, copied as builders for both runs of the differential tests.

Copied from pydantic/pydantic-ai at commit 4fda38988f2939fa6ea9cdefcf120693e10ef491
(``examples/pydantic_ai_examples/``: bank_support.py, weather_agent.py, flight_booking.py,
roulette_wheel.py, pydantic_model.py) with the same instructions, system prompts, tools,
output types, deps and retries. What changed, and why:

* every agent gets the run's scripted model (`Models`) instead of ``'openai:gpt-5.2'`` and
  the like, so no request leaves the machine;
* every tool logs its run to the run's `InvocationLog` once it has done its work, so the
  tests count real runs;
* logfire is left out (it only instruments; no request changes);
* bank_support.py's ``DatabaseConn`` wraps an SQLite connection (and reads a global
  ``cur``); here it is a fake over a dict with the same methods and the same customer;
* weather_agent.py's tools keep their code: its ``AsyncClient`` is given a
  ``httpx.MockTransport`` whose handler answers the demo endpoints with fixed values per
  location (upstream they are random, and two runs never agree on a random number);
* flight_booking.py's search loop and ``find_seat`` loop are the tests' turns: their
  ``UsageLimits(request_limit=15)`` is left out (no script comes near it, and the session
  has no per-run usage limit to give);
* roulette_wheel.py runs with ``run_stream``; here, as every example, with ``agent.run``.

Each builder is module-level and builds fresh agents, so both runs get their own.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from httpx import AsyncClient
from pydantic import BaseModel, Field
from pydantic_ai import Agent, ModelRetry, RunContext

from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models

__all__ = [
    "FLIGHTS_WEB_PAGE",
    "bank_support",
    "flight_booking",
    "flight_seat_preference",
    "pydantic_model",
    "roulette_wheel",
    "weather_agent",
]


# -- bank_support.py -----------------------------------------------------------------------


@dataclass
class DatabaseConn:
    """A fake database standing in for the example's SQLite wrapper: the same methods and rows."""

    customers: dict[int, tuple[str, float]]

    async def customer_name(self, *, id: int) -> str | None:
        row = self.customers.get(id)
        if row:
            return row[0]
        return None

    async def customer_balance(self, *, id: int) -> float:
        row = self.customers.get(id)
        if row:
            return row[1]
        else:
            raise ValueError("Customer not found")


@dataclass
class SupportDependencies:
    customer_id: int
    db: DatabaseConn


class SupportOutput(BaseModel):
    support_advice: str
    """Advice returned to the customer"""
    block_card: bool
    """Whether to block their card or not"""
    risk: int
    """Risk level of query"""


def bank_support(models: Models, log: InvocationLog) -> Built:
    """A support agent with deps, a dynamic instruction and a tool, answering `SupportOutput`."""
    support_agent = Agent(
        models.model(),
        deps_type=SupportDependencies,
        output_type=SupportOutput,
        instructions=(
            "You are a support agent in our bank, give the "
            "customer support and judge the risk level of their query. "
            "Reply using the customer's name."
        ),
    )

    @support_agent.instructions
    async def add_customer_name(ctx: RunContext[SupportDependencies]) -> str:
        customer_name = await ctx.deps.db.customer_name(id=ctx.deps.customer_id)
        return f"The customer's name is {customer_name!r}"

    @support_agent.tool
    async def customer_balance(ctx: RunContext[SupportDependencies]) -> str:
        """Returns the customer's current account balance."""
        balance = await ctx.deps.db.customer_balance(
            id=ctx.deps.customer_id,
        )
        log.record("tool", "customer_balance", customer_id=ctx.deps.customer_id)
        return f"${balance:.2f}"

    def deps() -> SupportDependencies:
        return SupportDependencies(customer_id=123, db=DatabaseConn(customers={123: ("John", 123.45)}))

    return Built(agent=support_agent, deps=deps)


# -- weather_agent.py ----------------------------------------------------------------------


@dataclass
class WeatherDeps:
    client: AsyncClient


class LatLng(BaseModel):
    lat: float
    lng: float


# What the demo endpoints answer, fixed per location (upstream: random).
_LOCATIONS = {"London": (51.5, -0.13), "Wiltshire": (51.35, -1.99), "Paris": (48.86, 2.35)}
_WEATHER = {(51.5, -0.13): "Sunny", (51.35, -1.99): "Drizzle", (48.86, 2.35): "Cloudy"}


def _demo_endpoints(request: httpx.Request) -> httpx.Response:
    """The demo endpoints, answered locally: latlng by location, number fixed, weather by place."""
    params = request.url.params
    match request.url.path:
        case "/latlng":
            lat, lng = _LOCATIONS[params["location"]]
            return httpx.Response(200, json={"lat": lat, "lng": lng})
        case "/number":
            return httpx.Response(200, text="21")
        case "/weather":
            return httpx.Response(200, text=_WEATHER[(float(params["lat"]), float(params["lng"]))])
        case path:
            return httpx.Response(404, text=f"no endpoint {path}")


def weather_agent(models: Models, log: InvocationLog) -> Built:
    """Two tools the model calls in turn, through an HTTP client in deps."""
    weather_agent = Agent(
        models.model(),
        # 'Be concise, reply with one sentence.' is enough for some models (like openai) to use
        # the below tools appropriately, but others like anthropic and gemini require a bit more direction.
        instructions="Be concise, reply with one sentence.",
        deps_type=WeatherDeps,
        retries=2,
    )

    @weather_agent.tool
    async def get_lat_lng(ctx: RunContext[WeatherDeps], location_description: str) -> LatLng:
        """Get the latitude and longitude of a location.

        Args:
            ctx: The context.
            location_description: A description of a location.
        """
        # NOTE: the response here will be random, and is not related to the location description.
        r = await ctx.deps.client.get(
            "https://demo-endpoints.pydantic.workers.dev/latlng",
            params={"location": location_description},
        )
        r.raise_for_status()
        log.record("tool", "get_lat_lng", location_description=location_description)
        return LatLng.model_validate_json(r.content)

    @weather_agent.tool
    async def get_weather(ctx: RunContext[WeatherDeps], lat: float, lng: float) -> dict[str, Any]:
        """Get the weather at a location.

        Args:
            ctx: The context.
            lat: Latitude of the location.
            lng: Longitude of the location.
        """
        # NOTE: the responses here will be random, and are not related to the lat and lng.
        temp_response, descr_response = await asyncio.gather(
            ctx.deps.client.get(
                "https://demo-endpoints.pydantic.workers.dev/number",
                params={"min": 10, "max": 30},
            ),
            ctx.deps.client.get(
                "https://demo-endpoints.pydantic.workers.dev/weather",
                params={"lat": lat, "lng": lng},
            ),
        )
        temp_response.raise_for_status()
        descr_response.raise_for_status()
        log.record("tool", "get_weather", lat=lat, lng=lng)
        return {
            "temperature": f"{temp_response.text} °C",
            "description": descr_response.text,
        }

    def deps() -> WeatherDeps:
        return WeatherDeps(client=AsyncClient(transport=httpx.MockTransport(_demo_endpoints)))

    @asynccontextmanager
    async def worker_client() -> AsyncGenerator[Mapping[str, Any]]:
        # The session's one deliberate change: the client is the worker's resource, since
        # an HTTP client cannot travel with the session's state (README "Deps").
        async with AsyncClient(transport=httpx.MockTransport(_demo_endpoints)) as client:
            yield {"client": client}

    return Built(agent=weather_agent, deps=deps, deps_resources=worker_client)


# -- flight_booking.py ---------------------------------------------------------------------


class FlightDetails(BaseModel):
    """Details of the most suitable flight."""

    flight_number: str
    price: int
    origin: str = Field(description="Three-letter airport code")
    destination: str = Field(description="Three-letter airport code")
    date: datetime.date


class NoFlightFound(BaseModel):
    """When no valid flight is found."""


@dataclass
class FlightDeps:
    web_page_text: str
    req_origin: str
    req_destination: str
    req_date: datetime.date


def flight_booking(models: Models, log: InvocationLog) -> Built:
    """The search agent, whose tool runs the extraction agent (conversation ``-extract``)."""
    # This agent is responsible for controlling the flow of the conversation.
    search_agent = Agent[FlightDeps, FlightDetails | NoFlightFound](
        models.model(),
        output_type=FlightDetails | NoFlightFound,
        deps_type=FlightDeps,
        retries=4,
        system_prompt=("Your job is to find the cheapest flight for the user on the given date. "),
    )

    # This agent is responsible for extracting flight details from web page text.
    extraction_agent = Agent(
        models.model("-extract"),
        output_type=list[FlightDetails],
        system_prompt="Extract all the flight details from the given text.",
    )

    @search_agent.tool
    async def extract_flights(ctx: RunContext[FlightDeps]) -> list[FlightDetails]:
        """Get details of all flights."""
        # we pass the usage to the search agent so requests within this agent are counted
        result = await extraction_agent.run(ctx.deps.web_page_text, usage=ctx.usage)
        log.record("tool", "extract_flights", flight_count=len(result.output))
        return result.output

    @search_agent.output_validator
    async def validate_output(
        ctx: RunContext[FlightDeps], output: FlightDetails | NoFlightFound
    ) -> FlightDetails | NoFlightFound:
        """Procedural validation that the flight meets the constraints."""
        if isinstance(output, NoFlightFound):
            return output

        errors: list[str] = []
        if output.origin != ctx.deps.req_origin:
            errors.append(f"Flight should have origin {ctx.deps.req_origin}, not {output.origin}")
        if output.destination != ctx.deps.req_destination:
            errors.append(
                f"Flight should have destination {ctx.deps.req_destination}, not {output.destination}"
            )
        if output.date != ctx.deps.req_date:
            errors.append(f"Flight should be on {ctx.deps.req_date}, not {output.date}")

        if errors:
            raise ModelRetry("\n".join(errors))
        else:
            return output

    def deps() -> FlightDeps:
        # As main() builds them.
        return FlightDeps(
            web_page_text=FLIGHTS_WEB_PAGE,
            req_origin="SFO",
            req_destination="ANC",
            req_date=datetime.date(2025, 1, 10),
        )

    return Built(agent=search_agent, deps=deps)


class SeatPreference(BaseModel):
    row: int = Field(ge=1, le=30)
    seat: Literal["A", "B", "C", "D", "E", "F"]


class Failed(BaseModel):
    """Unable to extract a seat selection."""


def flight_seat_preference(models: Models, log: InvocationLog) -> Built:
    """The seat preference agent, which ``find_seat`` asks until it understands."""
    # This agent is responsible for extracting the user's seat selection
    seat_preference_agent = Agent[object, SeatPreference | Failed](
        models.model(),
        output_type=SeatPreference | Failed,
        system_prompt=(
            "Extract the user's seat preference. "
            "Seats A and F are window seats. "
            "Row 1 is the front row and has extra leg room. "
            "Rows 14, and 20 also have extra leg room. "
        ),
    )
    return Built(agent=seat_preference_agent)


# in reality this would be downloaded from a booking site,
# potentially using another agent to navigate the site
FLIGHTS_WEB_PAGE = """
1. Flight SFO-AK123
- Price: $350
- Origin: San Francisco International Airport (SFO)
- Destination: Ted Stevens Anchorage International Airport (ANC)
- Date: January 10, 2025

2. Flight SFO-AK456
- Price: $370
- Origin: San Francisco International Airport (SFO)
- Destination: Fairbanks International Airport (FAI)
- Date: January 10, 2025

3. Flight SFO-AK789
- Price: $400
- Origin: San Francisco International Airport (SFO)
- Destination: Juneau International Airport (JNU)
- Date: January 20, 2025

4. Flight NYC-LA101
- Price: $250
- Origin: San Francisco International Airport (SFO)
- Destination: Ted Stevens Anchorage International Airport (ANC)
- Date: January 10, 2025

5. Flight CHI-MIA202
- Price: $200
- Origin: Chicago O'Hare International Airport (ORD)
- Destination: Miami International Airport (MIA)
- Date: January 12, 2025

6. Flight BOS-SEA303
- Price: $120
- Origin: Boston Logan International Airport (BOS)
- Destination: Ted Stevens Anchorage International Airport (ANC)
- Date: January 12, 2025

7. Flight DFW-DEN404
- Price: $150
- Origin: Dallas/Fort Worth International Airport (DFW)
- Destination: Denver International Airport (DEN)
- Date: January 10, 2025

8. Flight ATL-HOU505
- Price: $180
- Origin: Hartsfield-Jackson Atlanta International Airport (ATL)
- Destination: George Bush Intercontinental Airport (IAH)
- Date: January 10, 2025
"""


# -- roulette_wheel.py ---------------------------------------------------------------------


@dataclass
class RouletteDeps:
    winning_number: int


def roulette_wheel(models: Models, log: InvocationLog) -> Built:
    """A tool reading deps, and a bool output."""
    # Create the agent with proper typing
    roulette_agent = Agent(
        models.model(),
        deps_type=RouletteDeps,
        retries=3,
        output_type=bool,
        system_prompt=(
            "Use the `roulette_wheel` function to determine if the customer has won based on the number they bet on."
        ),
    )

    @roulette_agent.tool
    async def roulette_wheel(ctx: RunContext[RouletteDeps], square: int) -> Literal["winner", "loser"]:
        """Check if the bet square is a winner.

        Args:
            ctx: The context containing the winning number.
            square: The number the player bet on.
        """
        log.record("tool", "roulette_wheel", square=square)
        return "winner" if square == ctx.deps.winning_number else "loser"

    def deps() -> RouletteDeps:
        # As main() sets it up.
        return RouletteDeps(winning_number=18)

    return Built(agent=roulette_agent, deps=deps)


# -- pydantic_model.py ---------------------------------------------------------------------


class MyModel(BaseModel):
    city: str
    country: str


def pydantic_model(models: Models, log: InvocationLog) -> Built:
    """Structured output from text, no tools."""
    agent = Agent(models.model(), output_type=MyModel)
    return Built(agent=agent)
