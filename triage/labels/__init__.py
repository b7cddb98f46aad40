"""The label store: amendment records, the log, the writer, the effective label state, its checks
and exports. Imports only the core."""
