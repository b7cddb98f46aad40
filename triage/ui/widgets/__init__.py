"""Widgets that draw part of a screen from headless data (never computing a metric)."""
