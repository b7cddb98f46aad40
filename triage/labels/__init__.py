"""The label store: review records (judgements and verdicts), the log, the writer, the effective
label state, its checks and exports. Imports only the core."""
