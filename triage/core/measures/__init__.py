"""Measures: the registry of measures and their kernels (`families`, one module per family, as
ir_measures declares its measures), what the kernels read (`hits` for triage's four metrics,
`ranked` for the measures by name), names parsed (`names`), the per-query metrics at k
(`metrics`), gold encoded (`gold`), the paired view, intervals and the paired tests.

May import `ids`, `text` and below; never `inputs` (which parses a manifest's measures here),
`checks`, `views` or `gate`."""
