// Values the search API suggests for a field (tags, models, trace ids…), for the views' datalists.
import { get } from "./api";
import type { SuggestField } from "./filters";

// Suggestions are rate limited (10 a minute per key): each list is asked for once per tab.
const suggestionCache = new Map<string, Promise<string[]>>();
export function suggestions(field: SuggestField, metadataKey?: string): Promise<string[]> {
  const id = `${field}\u0000${metadataKey ?? ""}`;
  let hit = suggestionCache.get(id);
  if (!hit) {
    hit = get("/api/public/v2/requests/suggestions", { field, metadata_key: metadataKey, limit: 100 }).then(
      (r) => r.values ?? [],
      () => {
        suggestionCache.delete(id);
        return [];
      },
    );
    suggestionCache.set(id, hit);
  }
  return hit;
}
