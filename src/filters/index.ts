// The structured filter group of request-log search, suggestions, dataset versions and sheet imports:
// one parser, one compiler, one zod schema for request bodies and query strings.
export * from "./fields";
export * from "./parse";
export * from "./compile";
export * from "./schema";
export * from "./indexed";
