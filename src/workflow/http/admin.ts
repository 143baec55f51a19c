/**
 * `POST /admin/backup` (`skein admin backup PATH`): an online copy of the server's SQLite
 * database, written by the server to `path` on its own host while it keeps serving (see
 * persistence/sqlite/backup.ts). The copy holds every namespace, so the bearer must be
 * granted every namespace (`ns: "*"`, as the admin token); the path must be absolute and
 * must not exist (a backup never overwrites: `backup_exists`). On PostgreSQL storage the
 * answer is `backup_unsupported`: back it up with `pg_dump` (docs/operations.md).
 */

import type { FastifyInstance } from "fastify";
import { absolutePath, object } from "../../common/decode/index.ts";
import { workflowError } from "../errors.ts";
import type { BackupResult } from "../persistence/store.ts";
import { forbidden, principalOf } from "./auth.ts";

const backupBody = object({ path: absolutePath() });

/** What the admin routes call: the store's backup, absent on PostgreSQL. */
export interface AdminRoles {
  readonly backup: ((target: string) => Promise<BackupResult>) | undefined;
}

export function adminRoutes(app: FastifyInstance, roles: AdminRoles): void {
  app.post(
    "/admin/backup",
    {
      config: {
        api: {
          summary: "Copy the SQLite database online to a new file on the server host",
          body: backupBody,
        },
      },
    },
    async (request) => {
      if (principalOf(request).namespaces !== "*") {
        forbidden(
          'a backup holds every namespace: it needs a bearer granted every namespace (ns: "*")',
        );
      }
      const { path } = backupBody.run(request.body, undefined);
      if (roles.backup === undefined) {
        throw workflowError(
          "backup_unsupported",
          "this server stores runs in PostgreSQL: back it up with pg_dump (docs/operations.md)",
        );
      }
      const done = await roles.backup(path);
      return { path: done.path, bytes: done.bytes, pages: done.pages };
    },
  );
}
