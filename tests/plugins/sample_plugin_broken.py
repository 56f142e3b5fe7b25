"""Module plugin for the tests whose import fails, like a plugin with a missing dependency."""

raise RuntimeError("sample plugin cannot be imported")
