/**
 * The first-run configuration template. `skein serve` writes it where the configuration file
 * was expected when that file does not exist, so a fresh install runs with one command. It
 * turns on what a single-node installation wants (the outbox with its claim ceiling, and
 * deployments) and names a default namespace; every key it shows is in
 * docs/workflow-config.md, and a test decodes it with the real schema.
 */

export const FIRST_RUN_TEMPLATE = `# Skein workflow server configuration, written on first run by \`skein serve\`.
# Every key is described in docs/workflow-config.md; unknown keys are refused.

# Where the database, the signing key and the admin token live. A relative path is
# resolved against the directory of this file.
data_dir = "skein-data"

[http]
listen = "127.0.0.1:7380"
max_body_bytes = 1048576

[grpc]
listen = "127.0.0.1:7381"

[storage]
# Default: sqlite:<data_dir>/skein.db. A relative sqlite path is resolved under data_dir.
# url = "sqlite:skein.db"

[cluster]
shards = 16
# Default: this host's name.
# node_id = "node-1"

[namespaces]
# The namespace used when a request names none; created at start-up.
default = "default"
# "open": first use of a namespace creates it. "closed": create namespaces explicitly.
auto_create = "open"
# Claim ceiling per namespace for parallel and collect members (only with the outbox on).
max_in_flight_activities = 1024

[outbox]
enabled = true

[deployments]
enabled = true

[agents]
transport = true

# The MCP endpoint for agents (docs/mcp-workflows.md): off unless enabled. Put a TLS proxy in
# front of it; a browser-based client's Origin must be listed exactly.
# [mcp]
# enabled = true
# path = "/mcp"
# allowed_origins = ["https://console.example.com"]
# max_connections = 64
# max_sessions = 256
# session_idle_ms = 1800000
`;
