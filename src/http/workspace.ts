// Bodies and queries of PromptLayer's API may name a workspace_id; a key only ever reaches its own.
import type { AuthContext } from "../lib/auth-context";
import { ApiError } from "../lib/errors";

/** Another workspace's id is a 404 (never reveal that it exists). */
export function requireOwnWorkspace(auth: AuthContext, workspaceId: number | null | undefined): void {
  if (workspaceId != null && workspaceId !== auth.workspaceId) throw new ApiError("not_found", `workspace_id: workspace ${workspaceId} not found`);
}
