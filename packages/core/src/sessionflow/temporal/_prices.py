"""Model prices from the `genai-prices` table (maintained by Pydantic), for cost budgets."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["lookup_prices"]


@lru_cache(maxsize=256)
def lookup_prices(model: str, provider: str | None = None) -> tuple[float, float] | None:
    """(input, output) price per million tokens in USD, or None when the table does not know it."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:  # the table is optional; explicit prices still work
        return None
    try:
        calculation = calc_price(
            Usage(input_tokens=1_000_000, output_tokens=0), model_ref=model, provider_id=provider
        )
        output = calc_price(
            Usage(input_tokens=0, output_tokens=1_000_000), model_ref=model, provider_id=provider
        )
    except LookupError:
        return None
    return float(calculation.total_price), float(output.total_price)
