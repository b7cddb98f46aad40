"""The gate: floors a report is held to (`apply`), and floors proposed from an evaluation (`propose`).

May import every other room of core."""
