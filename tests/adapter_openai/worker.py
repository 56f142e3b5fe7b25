"""Worker child for the adapter tests: ``python -m tests.adapter_openai.worker``."""

from sessionflow import run_agent_worker
from tests.adapter_openai.scenarios import load_flow, state_dir_from_env

if __name__ == "__main__":
    run_agent_worker([load_flow(state_dir_from_env())])
