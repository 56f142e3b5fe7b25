"""Which worker deployment a worker joins: the argument, else the environment, else none."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.worker import Worker, WorkerDeploymentConfig

from sessionflow import connect
from sessionflow.temporal import WorkerDeployment, build_workers, current_version, default_build_id
from sessionflow.temporal.worker._deployment import BUILD_ID_ENV, DEPLOYMENT_NAME_ENV
from sessionflow.testing import save_scripted_flow


def test_no_deployment_name_means_unversioned() -> None:
    assert WorkerDeployment.from_environment({}) is None
    assert WorkerDeployment.from_environment({BUILD_ID_ENV: "abc"}) is None


def test_the_environment_names_the_deployment() -> None:
    found = WorkerDeployment.from_environment({DEPLOYMENT_NAME_ENV: "support", BUILD_ID_ENV: "v1.2.3"})
    assert found == WorkerDeployment("support", "v1.2.3")
    assert found is not None and found.version == "support:v1.2.3"


def test_a_deployment_without_a_build_id_is_refused() -> None:
    with pytest.raises(ValueError, match=BUILD_ID_ENV):
        WorkerDeployment.from_environment({DEPLOYMENT_NAME_ENV: "support"})


@pytest.mark.parametrize("name", ["", "a.b", "a:b", "a b"])
def test_bad_deployment_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="deployment name"):
        WorkerDeployment(name, "1")


@pytest.mark.parametrize("build_id", ["", "a b", "x" * 256])
def test_bad_build_ids_are_refused(build_id: str) -> None:
    with pytest.raises(ValueError, match="build ID"):
        WorkerDeployment("support", build_id)


def _versioning(worker: Worker) -> tuple[WorkerDeploymentConfig | None, str | None]:
    config = cast(dict[str, Any], worker.config())
    return config.get("deployment_config"), config.get("build_id")


async def test_workers_join_the_deployment_pinned(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await connect(temporal_address, "default")
    # One flow type per worker built: the SDK refuses two workers of one task queue per client.
    flows = iter(save_scripted_flow(tmp_path / str(n), f"deployment-config-{n}") for n in range(5))
    (worker,) = build_workers(client, [next(flows)], deployment=WorkerDeployment("support", "b7"))
    deployment, build_id = _versioning(worker)
    assert deployment is not None and deployment.use_worker_versioning
    assert deployment.version == WorkerDeploymentVersion("support", "b7")
    assert deployment.default_versioning_behavior is VersioningBehavior.PINNED
    assert not build_id

    # The environment, when no argument names one.
    monkeypatch.setenv(DEPLOYMENT_NAME_ENV, "support")
    monkeypatch.setenv(BUILD_ID_ENV, "c8")
    (worker,) = build_workers(client, [next(flows)])
    deployment, _ = _versioning(worker)
    assert deployment is not None and deployment.version == WorkerDeploymentVersion("support", "c8")
    with pytest.raises(ValueError, match="differs"):
        build_workers(client, [next(flows)], build_id="other")

    # A build ID alone names the code of an unversioned worker.
    monkeypatch.delenv(DEPLOYMENT_NAME_ENV)
    (worker,) = build_workers(client, [next(flows)])
    assert _versioning(worker) == (None, "c8")
    monkeypatch.delenv(BUILD_ID_ENV)
    (worker,) = build_workers(client, [next(flows)])
    assert _versioning(worker) == (None, default_build_id())


async def test_an_unknown_deployment_is_a_clear_error(temporal_address: str) -> None:
    client = await connect(temporal_address, "default")
    with pytest.raises(LookupError, match="no worker deployment 'never-polled'"):
        await current_version(client, "never-polled")
