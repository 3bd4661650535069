// Types of seed-logs.mjs, for the workers test that seeds logs of the benchmark's shape.
export declare const CHUNK: number;
export declare const START_MS: number;
export declare function logsSql(ws: number, from: number, to: number): string;
export declare function facetsSql(ws: number): string;
export declare function dailySql(ws: number, bucketSql: (latency: string) => string): string;
