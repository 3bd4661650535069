// Types of bench-requests.mjs, for the workers test that searches logs of the benchmark's shape.
type SearchBody = { filter_group?: unknown; sort_by?: string; sort_order?: string; page?: number; per_page: number };
export declare function logBody(i: number): string;
export declare const LOG_BODY: typeof logBody;
export declare const SUGGESTIONS: Record<string, string>[];
export declare function searchesFor(logs: number): Record<string, SearchBody>;
export declare const SEARCHES: Record<string, SearchBody>;
export declare const MATCHING_NOTHING: SearchBody;
