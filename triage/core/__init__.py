"""The headless core: loading, id encoding, metrics, flips, checks. Never imports Textual or Rich."""
