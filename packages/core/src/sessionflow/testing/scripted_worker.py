"""Worker child for scripted flows: `python -m sessionflow.testing.scripted_worker`."""

from sessionflow.testing._scripted_flow import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
