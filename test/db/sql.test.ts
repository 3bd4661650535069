import { describe, expect, it } from "vitest";
import { requestLogs, requestLogUnindexed } from "../../src/db/schema";
import { columnNames } from "../../src/db/sql";

describe("columnNames", () => {
  it("gives each column's SQL name by its drizzle key, unquoted", () => {
    const c = columnNames(requestLogs);
    expect(c.requestEndTime).toBe("request_end_time");
    expect(c.id).toBe("id");
    expect(c.promptId).toBe("prompt_id");
    expect(columnNames(requestLogUnindexed)).toEqual({ requestId: "request_id", tools: "tools", createdAt: "created_at" });
  });
});
