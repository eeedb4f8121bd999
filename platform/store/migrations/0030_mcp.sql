-- Upstream MCP servers (docs/mcp.md): Warden's /mcp door offers their
-- tools to agents under scopes mcp:SERVER/TOOL. The bearer token is sealed
-- (platform/seal, bound to the server's id); discovered_at is '' until the
-- first discovery, discovery_error the last one's failure ('' when it
-- succeeded).
CREATE TABLE mcp_servers (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    url             TEXT NOT NULL,
    token_sealed    TEXT NOT NULL DEFAULT '',
    timeout_ms      INTEGER NOT NULL,
    owner           TEXT NOT NULL DEFAULT '',
    enabled         INTEGER NOT NULL DEFAULT 1,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    discovered_at   TEXT NOT NULL DEFAULT '',
    discovery_error TEXT NOT NULL DEFAULT ''
);

-- The tools a discovery found. impact and reversible are NULL until an
-- admin classifies the tool (an unclassified tool is refused); a changed
-- digest (sha256 of the canonical JSON of name, description and input
-- schema) returns the tool to unclassified. gone = 1: the last discovery
-- no longer listed it.
CREATE TABLE mcp_tools (
    server_id     TEXT NOT NULL REFERENCES mcp_servers (id),
    name          TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    input_schema  TEXT NOT NULL,
    digest        TEXT NOT NULL,
    impact        TEXT,
    reversible    INTEGER,
    gone          INTEGER NOT NULL DEFAULT 0,
    discovered_at TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (server_id, name)
);
