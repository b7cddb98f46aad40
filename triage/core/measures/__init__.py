"""Measures: gold encoded for the metrics, the per-query metrics at k, the paired view, intervals.

May import `inputs`, `ids` and `text`; never `checks`, `views` or `gate`."""
