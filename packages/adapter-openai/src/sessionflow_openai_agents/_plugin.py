"""Registers the framework."""
