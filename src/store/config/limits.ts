/**
 * The fixed limits of the store service's configuration, from the spec's Limits table and
 * field rules. They are constants, not settings: every file reader and decoder that enforces
 * one imports it from here, so a limit is written down once.
 */

/** Door configuration file and HTTP MCP (service) configuration file, in bytes. */
export const CONFIG_FILE_MAX_BYTES = 1_048_576;
/** An app credential file: one line of at most this many bytes. */
export const CREDENTIAL_FILE_MAX_BYTES = 4096;
/** A store name: 1 to 128 UTF-8 bytes. */
export const STORE_NAME_MAX_BYTES = 128;
/** A resource metadata URL placed in a 401 challenge, in bytes. */
export const RESOURCE_METADATA_URL_MAX_BYTES = 2048;
/** The MCP request path, in ASCII bytes. */
export const MCP_PATH_MIN_BYTES = 2;
export const MCP_PATH_MAX_BYTES = 256;
/** The door's callback path, appended to its origin to form the only accepted redirect. */
export const DOOR_CALLBACK_PATH = "/callback";
/**
 * The longest Unix socket path the platform accepts, in bytes: `sun_path` is 108 bytes on
 * Linux and 104 on the BSDs and macOS, and must hold the terminating NUL.
 */
export const UNIX_SOCKET_PATH_MAX_BYTES = process.platform === "linux" ? 107 : 103;
