"""`payloads:` in the configuration file, and the start-up check of the store it names.

The S3 cases run against moto's server mode (`tests.temporal.storage.s3_server`), a real S3 wire protocol.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionflow.demo import ModelReply
from sessionflow.temporal import PayloadStore, free_port
from sessionflow_cli._errors import EXIT_USAGE, UsageError
from sessionflow_cli._payloads import open_payload_store
from sessionflow_cli.config import CliConfig, ConfigError, parse_config
from tests.cli.conftest import Cli
from tests.temporal.storage.s3_server import (
    AWS_TEST_ENV,
    MotoServer,
    aws_test_environment,
    create_bucket,
    list_objects,
    running_moto,
)

FRAMEWORK = "scripted"


def parse(tmp_path: Path, text: str) -> CliConfig:
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    return parse_config(FRAMEWORK, text, path=folder / f"{FRAMEWORK}.yaml", cwd=tmp_path)


def rejected(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse(tmp_path, text)
    return caught.value


@pytest.fixture(scope="module")
def moto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoServer]:
    with running_moto(tmp_path_factory.mktemp("moto") / "moto.log") as server:
        yield server


# -- the file ------------------------------------------------------------------------------


def test_no_payloads_key_leaves_the_default_store(tmp_path: Path) -> None:
    assert parse(tmp_path, "model: x\n").payloads is None


def test_a_folder_store_is_relative_to_the_file(tmp_path: Path) -> None:
    config = parse(tmp_path, "payloads: {store: bodies}\n")
    assert config.payloads == PayloadStore(location=str(tmp_path / "config" / "bodies"))
    assert config.payloads is not None and config.payloads.threshold == 128 * 1024


def test_an_s3_store_keeps_its_endpoint_region_and_threshold(tmp_path: Path) -> None:
    config = parse(
        tmp_path,
        "payloads: {store: 's3://bucket/some/prefix', endpoint: 'http://127.0.0.1:9000', "
        "region: eu-west-1, threshold: 0}\n",
    )
    assert config.payloads == PayloadStore(
        location="s3://bucket/some/prefix", endpoint="http://127.0.0.1:9000", region="eu-west-1", threshold=0
    )


@pytest.mark.parametrize(
    ("text", "code", "pointer", "keyword"),
    [
        ("payloads: {store: x, threshold: -1}\n", "schema", "/payloads/threshold", "minimum"),
        ("payloads: {store: x, threshold: 1.5}\n", "schema", "/payloads/threshold", "type"),
        ("payloads: {store: x, treshold: 5}\n", "schema", "/payloads", "additionalProperties"),
        ("payloads: {endpoint: 'http://h:1'}\n", "schema", "/payloads", "required"),
        ("payloads: {store: ''}\n", "schema", "/payloads/store", "minLength"),
        ("payloads: {store: 's3://b/p', endpoint: 'h:9000'}\n", "schema", "/payloads/endpoint", "pattern"),
        ("payloads: {store: bodies, endpoint: 'http://h:1'}\n", "conflict", "/payloads/endpoint", None),
        ("payloads: {store: bodies, region: us-east-1}\n", "conflict", "/payloads/region", None),
        ("payloads: {store: 's3://'}\n", "invalid", "/payloads/store", None),
        ("payloads: {store: 'ftp://host/x'}\n", "invalid", "/payloads/store", None),
    ],
)
def test_a_rejected_payloads_key_names_the_place(
    tmp_path: Path, text: str, code: str, pointer: str, keyword: str | None
) -> None:
    error = rejected(tmp_path, text)
    assert (error.code, error.pointer) == (code, pointer), str(error)
    if keyword is not None:
        assert error.keyword == keyword, str(error)


# -- the start-up check --------------------------------------------------------------------


def usage_error(store: PayloadStore) -> UsageError:
    with pytest.raises(UsageError) as caught:
        asyncio.run(open_payload_store(store))
    assert caught.value.exit_code == EXIT_USAGE
    return caught.value


def test_an_unreachable_s3_endpoint_is_refused_at_start(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with aws_test_environment():
        error = usage_error(PayloadStore(location="s3://sessionflow-none/p", endpoint=endpoint))
    assert f"payload store (s3://sessionflow-none/p at {endpoint}) does not answer" in error.message
    assert "HeadBucket" in error.message and "EndpointConnectionError" in error.message


def test_a_missing_bucket_is_refused_and_an_existing_one_is_used(moto: MotoServer) -> None:
    with aws_test_environment():
        missing = usage_error(PayloadStore(location="s3://sessionflow-missing/p", endpoint=moto.url))
        assert "HeadBucket s3://sessionflow-missing/" in missing.message and "404" in missing.message
        bucket = f"sessionflow-{uuid.uuid4().hex[:12]}"
        asyncio.run(create_bucket(moto.url, bucket))
        store = PayloadStore(location=f"s3://{bucket}/p", endpoint=moto.url)
        assert asyncio.run(open_payload_store(store)) == store


def test_a_folder_that_cannot_be_made_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    error = usage_error(PayloadStore(location=str(blocker / "payloads")))
    assert f"payload store (local folder {blocker / 'payloads'}) cannot be written" in error.message


def test_s3_without_the_extra_is_refused(tmp_path: Path) -> None:
    # A process where aioboto3 cannot be imported, as in an install without sessionflow[s3].
    program = (
        "import asyncio, sys\n"
        "sys.modules['aioboto3'] = None\n"
        "from sessionflow.temporal import PayloadStore\n"
        "from sessionflow_cli._errors import UsageError\n"
        "from sessionflow_cli._payloads import open_payload_store\n"
        "try:\n"
        "    asyncio.run(open_payload_store(PayloadStore(location='s3://b/p')))\n"
        "except UsageError as error:\n"
        "    print(error.exit_code, error.message)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.stdout.strip() == (
        '2 payload store s3://b/p: the S3 payload store needs aioboto3: pip install "sessionflow[s3]"'
    ), result.stderr


# -- the command ---------------------------------------------------------------------------


def test_the_command_exits_2_on_an_unreachable_store(cli: Cli) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    cli.write_config(
        f"model: scripted\nserver: {cli.server_address}\npayloads: {{store: 's3://sessionflow-none/p', "
        f"endpoint: '{endpoint}'}}\n"
    )
    result = cli.run("-f", FRAMEWORK, "-p", "hi", extra_env=dict(AWS_TEST_ENV))
    assert result.returncode == 2, result.stderr
    assert f"payload store (s3://sessionflow-none/p at {endpoint}) does not answer" in result.stderr


def test_the_command_keeps_its_payloads_on_the_configured_s3_store(cli: Cli, moto: MotoServer) -> None:
    bucket = f"sessionflow-{uuid.uuid4().hex[:12]}"
    with aws_test_environment():
        asyncio.run(create_bucket(moto.url, bucket))
    # Threshold 0: every payload goes by reference, so the run must write to the bucket.
    cli.write_config(
        f"model: scripted\nserver: {cli.server_address}\n"
        f"local_tools: {{files: false, shell: {{enabled: false}}, web_fetch: false, browser: false}}\n"
        f"payloads: {{store: 's3://{bucket}/cli', endpoint: '{moto.url}', threshold: 0}}\n"
    )
    cli.script([ModelReply.say("stored far away")])
    result = cli.run("-f", FRAMEWORK, "-p", "hi", extra_env=dict(AWS_TEST_ENV))
    assert result.returncode == 0, result.stderr
    assert "stored far away" in result.stdout
    with aws_test_environment():
        objects = asyncio.run(list_objects(moto.url, bucket))
    assert objects and all(key.startswith("cli/v0/") for key in objects), sorted(objects)[:5]
