import * as probe from "../store/errors.ts";

export const probed = probe;
