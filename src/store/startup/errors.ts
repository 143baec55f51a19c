/**
 * The codes `serve` refuses with at start-up, after the service file decoded: checks that
 * need the file system or other processes. Each refusal is a SkeinError whose message
 * starts with the field it concerns.
 */

import { SkeinError } from "../../common/errors.ts";

export const INVALID_DATA_DIR = "invalid_data_dir";
export const INVALID_SOCKET = "invalid_socket";
export const INVALID_RUNTIME_LOCATION = "invalid_runtime_location";
export const ENDPOINT_TOO_LONG = "endpoint_too_long";
export const INVALID_STORE_NAME = "invalid_store_name";
/** `serve --create` without a `create` object. */
export const CREATE_SECTION_REQUIRED = "create_section_required";
/** Another live `serve` owns this store name. */
export const STORE_NAME_IN_USE = "store_name_in_use";

export function startupRefusal(code: string, field: string, reason: string): SkeinError {
  return new SkeinError(code, `${field}: ${reason}`);
}
