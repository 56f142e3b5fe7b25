"""Google ADK adapter for sessionflow."""
