// Block types PromptLayer has that this service stores nowhere and cannot run: refused with a 400 that
// says so (docs/blocks.md lists what computes). They need a sandbox, a person, or a loop engine.
import { z } from "zod";
import { BlockError, type BlockDefinition } from "../types";

const WHY: Record<string, string> = {
  HUMAN: "it waits for a person's input",
  CODE_EXECUTION: "running user code needs a sandbox this service does not have",
  CODING_AGENT: "running an agent needs a sandbox this service does not have",
  MCP: "MCP servers are not supported",
  WORKFLOW: "workflows inside workflows are not supported",
  FOR_LOOP: "loops are not supported",
  WHILE_LOOP: "loops are not supported",
  CONVERSATION_SIMULATOR: "multi-turn simulation is not supported",
  CONDITION: "condition blocks are not supported (use conditional edges between nodes)",
};

export const UNSUPPORTED_BLOCKS: Record<string, BlockDefinition> = Object.fromEntries(
  Object.entries(WHY).map(([type, why]) => [
    type,
    {
      computes: false,
      why,
      configSchema: z.unknown(),
      sources: () => [],
      evaluate: () => {
        throw new BlockError(`${type} blocks cannot run here: ${why}`);
      },
    } as BlockDefinition,
  ]),
);

export function unsupportedReason(type: string): string | undefined {
  return WHY[type];
}
