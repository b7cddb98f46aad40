"""Views: figures read off an evaluation beside the headline — slices, rank movements, cause hints,
query origin, cost, answers. May import `checks`, `measures`, `inputs`, `ids` and `text`."""
