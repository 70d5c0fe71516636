"""Token and cost accounting per model.

Prices are US dollars per million tokens (input, output), list prices of the providers at the time of
writing; pass ``prices={"model": (in, out)}`` (CLI ``--price IN,OUT``) to override.  Local and offline
judges cost nothing.  The paper reports $619.41 for 2,005,387 instances = $0.000309 per instance
(MasterSet paper, Appendix E.3); :meth:`CostLedger.summary` gives ours in the same form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-2.5-pro": (1.25, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
}
FREE = (0.0, 0.0)


def price_for(model: str, prices: dict[str, tuple[float, float]] | None = None) -> tuple[float, float]:
    """(input, output) dollars per million tokens; exact name first, then the longest known prefix
    (``gemini-2.5-flash-001`` -> ``gemini-2.5-flash``); unknown models are free (self-hosted)."""
    table = {**PRICES_PER_MTOK, **(prices or {})}
    if model in table:
        return table[model]
    base = model.rsplit("/", 1)[-1]
    for name in sorted(table, key=len, reverse=True):
        if base.startswith(name):
            return table[name]
    return FREE


def cost_usd(model: str, input_tokens: int, output_tokens: int,
             prices: dict[str, tuple[float, float]] | None = None) -> float:
    p_in, p_out = price_for(model, prices)
    return (input_tokens * p_in + output_tokens * p_out) / 1e6


@dataclass
class ModelUsage:
    calls: int = 0
    cached: int = 0
    parse_failures: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass
class CostLedger:
    """Totals per model; ``add`` one Judgement at a time."""

    models: dict[str, ModelUsage] = field(default_factory=dict)

    def add(self, model: str, j) -> None:
        u = self.models.setdefault(model, ModelUsage())
        if j.cached:
            u.cached += 1
        else:
            u.calls += 1
            u.input_tokens += j.input_tokens
            u.output_tokens += j.output_tokens
            u.cost_usd += j.cost_usd
        if j.value is None:
            if (j.error or "").startswith("parse"):
                u.parse_failures += 1
            else:
                u.errors += 1

    def summary(self, instances: int) -> dict:
        tot = ModelUsage()
        for u in self.models.values():
            for k in vars(tot):
                setattr(tot, k, getattr(tot, k) + getattr(u, k))
        per = tot.cost_usd / instances if instances else 0.0
        return {
            "instances": instances,
            "calls": tot.calls, "cached": tot.cached,
            "parse_failures": tot.parse_failures, "errors": tot.errors,
            "input_tokens": tot.input_tokens, "output_tokens": tot.output_tokens,
            "cost_usd": round(tot.cost_usd, 9),
            "cost_per_instance_usd": per,
            "report": f"${tot.cost_usd:,.2f} for {instances:,} instances ≈ ${per:.6f} each "
                      f"(paper: $619.41 for 2,005,387 ≈ $0.000309)",
            "per_model": {m: vars(u) for m, u in self.models.items()},
        }


__all__ = ["PRICES_PER_MTOK", "price_for", "cost_usd", "CostLedger", "ModelUsage"]
