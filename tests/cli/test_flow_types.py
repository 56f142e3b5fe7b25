"""conformance/cli_session_flow_types.json: the flow type rule, with values computed elsewhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from sessionflow_cli._flow_types import (
    StartEnvironment,
    flow_type_prefix,
    namespace_session_flow_type,
    session_flow_type,
    start_environment,
)

CASES = cast(
    list[dict[str, Any]],
    json.loads((Path(__file__).parents[2] / "conformance" / "cli_session_flow_types.json").read_text())[
        "cases"
    ],
)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    got = namespace_session_flow_type(
        flow_type_prefix(case["framework"]),
        host_name=case["host_name"],
        user_id=case["user_id"],
        config_identity=case["config_identity"],
        workspace=case["workspace"],
    )
    assert got == case["flow_type"]
    environment = StartEnvironment(
        host_name=case["host_name"],
        user_id=case["user_id"],
        config_identity=case["config_identity"],
        workspace=case["workspace"],
        user_name="someone",  # not hashed
    )
    assert session_flow_type(case["framework"], environment) == case["flow_type"]


def test_the_cases_cover_padding() -> None:
    padded = [c for c in CASES if c["flow_type"][-6:].startswith("0")]
    assert len(padded) >= 2
    assert all(int(c["flow_type"][-6:], 36) == c["suffix_value"] for c in CASES)


def test_this_process_uses_real_paths(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert start_environment("defaults", link).workspace == str(real.resolve())
    record = start_environment("defaults", real).as_record()
    assert set(record) >= {"host_name", "user_id", "config_identity", "workspace"}
    assert record["config_identity"] == "defaults"
