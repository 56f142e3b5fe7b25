"""The `sessionflow` command."""

__all__ = ["main"]


def main() -> None:
    """Console entry point (filled in by the CLI issue)."""
    raise SystemExit(2)
