// Schemas of the environment variable endpoints (workspace and tool scopes share them).
import { z } from "@hono/zod-openapi";

const VALUE_MAX = 8192;
const EnvKey = z
  .string()
  .min(1, "must be 1 to 255 characters")
  .max(255, "must be 1 to 255 characters")
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must start with a letter or underscore and hold only letters, digits and underscores");
export const EnvVar = z
  .object({
    id: z.int(),
    key: z.string(),
    value_suffix: z.string().nullable().openapi({ description: "The last four characters of a value of 12 characters or more; null for a shorter or empty value. Nothing of the value is stored in plain text: the suffix is read from the sealed value." }),
    is_empty: z.boolean().openapi({ description: "True for a placeholder created without a value." }),
    created_at: z.string(),
    updated_at: z.string(),
    workspace_id: z.int().optional().openapi({ description: "On workspace variables." }),
    tool_registry_id: z.int().optional().openapi({ description: "On tool variables." }),
  })
  .openapi("EnvVar");
export const CreateBody = z
  .object({
    key: EnvKey,
    value: z.string().max(VALUE_MAX, `must be at most ${VALUE_MAX} characters`).optional().openapi({ description: "May be empty or absent: a placeholder to fill later." }),
  })
  .openapi("CreateEnvVarRequest");
export const UpdateBody = z
  .object({ value: z.string().min(1, `must be 1 to ${VALUE_MAX} characters`).max(VALUE_MAX, `must be 1 to ${VALUE_MAX} characters`) })
  .openapi("UpdateEnvVarRequest");
