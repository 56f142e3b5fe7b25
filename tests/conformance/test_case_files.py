"""The shipped cases load, cover the required scenarios, and bad files fail with file and JSON pointer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessionflow.testing.conformance import CaseFileError, bundled_cases_dir, load_case, load_cases

REQUIRED = {
    "text_answer",
    "read_tool",
    "parallel_reads",
    "tool_error_not_retried",
    "read_crashes_twice",
    "read_always_crashes",
    "idempotent_write_always_crashes",
    "approved_write_runs_once",
    "rejection_with_message",
    "approval_expires",
    "explicit_policy_override",
    "mcp_annotations",
    "sigkill_during_non_idempotent_write",
    "sigkill_during_approval_wait",
    "sigkill_during_model_call",
    "sigkill_before_resume",
    "model_fails_every_attempt",
    "multi_turn_tool_results",
    "queued_message",
    "usage_summed",
    "text_deltas_identity",
    "repeated_tool_call_ids",
    "large_tool_output",
    "image_message",
    "continue_retry_prompt",
    "sigkill_after_continue",
    "carry_between_turns",
    "tool_state_parallel_updates",
    "sigkill_after_tool_state",
    "framework_approval_on_read",
    "framework_pre_approval_floor",
    "question_answered",
    "sigkill_during_write_verified_succeeded",
    "sigkill_during_write_verified_failed",
    "sigkill_during_write_verify_unknown",
}


def test_bundled_cases_load_and_cover_the_required_scenarios() -> None:
    cases = load_cases(bundled_cases_dir())
    ids = [case.id for case in cases]
    assert REQUIRED <= set(ids), sorted(REQUIRED - set(ids))
    assert len(ids) == len(set(ids))
    requires = {case.id: set(case.requires) for case in cases}
    assert requires["parallel_reads"] == {"parallel_tool_calls"}
    assert requires["mcp_annotations"] == {"mcp_annotations"}
    assert requires["image_message"] == {"images"}
    assert requires["text_answer"] == set()
    assert requires["continue_retry_prompt"] == {"continue_steps"}
    assert requires["carry_between_turns"] == {"carry_state"}
    assert requires["tool_state_parallel_updates"] == {"parallel_tool_calls", "tool_state"}
    assert requires["framework_approval_on_read"] == {"framework_approvals"}
    assert requires["framework_pre_approval_floor"] == {"framework_approvals"}
    assert requires["question_answered"] == {"questions"}
    assert requires["sigkill_during_write_verified_succeeded"] == {"verified_outcomes"}
    assert requires["steer_during_tool"] == requires["sigkill_after_steer"] == {"steering"}
    assert requires["steer_after_last_step"] == set()  # queued or steered, it starts the next turn


def test_the_repository_cases_are_the_bundled_ones() -> None:
    # In a source checkout the plugin reads conformance/cases at the repository root.
    assert bundled_cases_dir().resolve() == (Path(__file__).parents[2] / "conformance" / "cases").resolve()


MINIMAL: dict[str, Any] = {
    "title": "minimal",
    "tools": [
        {
            "name": "lookup",
            "description": "d",
            "parameters": {"type": "object", "properties": {}},
            "effect": "read",
            "behaviour": {"kind": "block", "gate": "g", "text": "x"},
        }
    ],
    "model": [{"text": "hi"}],
    "steps": [{"action": "start", "text": "hello"}, {"action": "wait_idle", "turns": 1}],
    "expect": {"snapshot": {"turn_count": 1}},
}


def write_case(tmp_path: Path, data: dict[str, Any], name: str = "some_case") -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_a_minimal_case_loads(tmp_path: Path) -> None:
    case = load_case(write_case(tmp_path, MINIMAL))
    assert case.id == "some_case"
    assert case.gates == frozenset({"g"})
    assert case.model[0].text == "hi"


def variant(path: str, value: object) -> dict[str, Any]:
    """MINIMAL with the value at a JSON pointer replaced (or the key removed when value is ...)."""
    data: Any = json.loads(json.dumps(MINIMAL))
    *parents, last = path.strip("/").split("/")
    node: Any = data
    for token in parents:
        node = node[int(token) if token.isdigit() else token]
    key: Any = int(last) if last.isdigit() else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return data


@pytest.mark.parametrize(
    ("data", "pointer", "reason"),
    [
        (variant("/title", ...), "/", "missing required field 'title'"),
        (variant("/tools/0/behaviour/kind", "explode"), "/tools/0/behaviour/kind", "'explode' is not one of"),
        (variant("/tools/0/effect", "readonly"), "/tools/0/effect", "'readonly' is not one of"),
        (variant("/tools/0/parameters", {"type": "array"}), "/tools/0/parameters", 'type": "object"'),
        (variant("/model/0/delay_seconds", -1), "/model/0", "delay_seconds must be >= 0"),
        (variant("/model/0/txt", "typo"), "/model/0/txt", "unknown field 'txt'"),
        (variant("/steps/1/turns", 0), "/steps/1/turns", "must be >= 1"),
        (variant("/steps/0", {"action": "send", "text": "x"}), "/steps/0", "first step must be"),
        (variant("/steps/1", {"action": "wait_gates", "gates": ["nope"]}), "/steps/1", "gate 'nope'"),
        (variant("/expect/snapshot/turn_count", "1"), "/expect/snapshot/turn_count", "expected an integer"),
        (
            variant("/expect/tool_statuses", {"c1": "done"}),
            "/expect/tool_statuses/c1",
            "'done' is not one of",
        ),
        (variant("/requires", ["telepathy"]), "/requires/0", "'telepathy' is not one of"),
        (variant("/images", {"red": {"width": 1, "height": 1, "rgb": [1, 2, 3]}}), "/", 'list "images"'),
        (variant("/output_check", {"must_contain": "x", "retry_prompt": "y"}), "/", 'list "continue_steps"'),
        (variant("/output_check", {"must_contain": "x"}), "/output_check", "retry_prompt"),
        (variant("/carry_counter", {"label": "n"}), "/", 'list "carry_state"'),
        (
            variant("/carry_counter", {"reset_when": "x"}) | {"requires": ["carry_state"]},
            "/carry_counter",
            "label",
        ),
        (variant("/tools/0/behaviour/state_update", {"k": 1}), "/", 'list "tool_state"'),
        (
            variant("/tools/0/behaviour/state_update", {}) | {"requires": ["tool_state"]},
            "/tools/0/behaviour/state_update",
            "at least one key",
        ),
        (
            variant("/steps/1", {"action": "wait_tool_calls", "statuses": {"c1": "done"}}),
            "/steps/1/statuses/c1",
            "'done' is not one of",
        ),
        (variant("/tools/0/framework_approval", "required"), "/", 'list "framework_approvals"'),
        (
            variant("/tools/0/framework_approval", "maybe"),
            "/tools/0/framework_approval",
            "'maybe' is not one of",
        ),
        (variant("/tools/0/question_argument", "q"), "/", 'list "questions"'),
        (variant("/tools/0/verify", {"answer": "succeeded"}), "/", 'list "verified_outcomes"'),
        (variant("/tools/0/verify", {"answer": "maybe"}), "/tools/0/verify/answer", "'maybe' is not one of"),
        (
            variant("/steps/1", {"action": "kill_worker"}) | {"worker": "in_process"},
            "/steps/1",
            "in-process worker cannot be killed",
        ),
    ],
)
def test_bad_fields_are_named_by_file_and_json_pointer(
    tmp_path: Path, data: dict[str, Any], pointer: str, reason: str
) -> None:
    path = write_case(tmp_path, data)
    with pytest.raises(CaseFileError) as caught:
        load_case(path)
    assert (caught.value.path, caught.value.pointer or "/") == (path, pointer)
    assert reason in caught.value.reason
    assert str(path) in str(caught.value) and pointer in str(caught.value)


def test_invalid_json_and_bad_file_names(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"title": ')
    with pytest.raises(CaseFileError, match=r"broken\.json: at / \(JSON pointer\): not valid JSON"):
        load_case(broken)
    with pytest.raises(CaseFileError, match=r"file name 'Bad-Name\.json'"):
        load_case(write_case(tmp_path, MINIMAL, name="Bad-Name"))


def test_an_empty_case_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no \*\.json cases"):
        load_cases(tmp_path)
