"""schemathesis against the published OpenAPI spec: generated requests (valid and invalid) to every
operation; no 5xx, and every response (status code, content type, headers, body) matches the spec."""

from __future__ import annotations

import pytest
from helpers import recommender as S

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

pytestmark = pytest.mark.data          # the app serves the slice recommender (helpers.recommender)

CASES: dict[str, int] = {}


class _Trained:
    """The slice recommender, trained on first use (not while pytest collects)."""

    def __getattr__(self, name):
        return getattr(S.trained(), name)


def _schema():
    from mustcite.api.app import create_app

    return schemathesis.openapi.from_asgi("/openapi.json", create_app(_Trained(), max_upload=2 * 2**20))


schema = _schema()


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_response_matches_the_spec(case):
    from schemathesis.checks import positive_data_acceptance

    excluded = [positive_data_acceptance] if case.path == "/api/audit" else []
    case.call_and_validate(excluded_checks=excluded)
    key = f"{case.method} {case.path}"
    CASES[key] = CASES.get(key, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def _report_cases():
    yield
    if CASES:   # shown with `pytest -s`: how many generated requests each operation answered
        print(f"\nschemathesis cases: {dict(sorted(CASES.items()))}, total {sum(CASES.values())}")
