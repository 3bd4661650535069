// The id-list join every reader of logs by id goes through (search pages over several periods, dataset
// fills, previews and appends, sheet imports of chosen logs): its own module, below the readers that
// share it, so none of them imports another for it.
import { getTableName } from "drizzle-orm";
import { requestLogs } from "../db/schema";
import { columnNames } from "../db/sql";

const LOGS = getTableName(requestLogs);
const R = columnNames(requestLogs);

/**
 * `FROM json_each(ids) CROSS JOIN request_logs`: the CROSS JOIN keeps the id list as the outer loop, so
 * each id is one primary-key lookup whatever statistics SQLite has (with a plain JOIN and no
 * sqlite_stat1 the planner may scan the workspace's logs once per chunk instead).
 */
export const LOGS_BY_IDS = (idsJson: string, ws: string) => `json_each(${idsJson}) AS j CROSS JOIN ${LOGS} AS r ON r.${R.id} = j.value AND r.${R.workspaceId} = ${ws}`;
