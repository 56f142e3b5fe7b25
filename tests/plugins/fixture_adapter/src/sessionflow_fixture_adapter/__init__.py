"""Test fixture: a tiny third-party sessionflow adapter found through its entry point."""
