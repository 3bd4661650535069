// Stylesheets are imported for their side effect: Vite emits them as one CSS file.
declare module "*.css";

// The sheet schemas the console takes its types from name the SQLite value type of the Workers
// runtime (src/sheets/types.ts); the console never holds one, so its shape here is that type's.
type SqlStorageValue = ArrayBuffer | string | number | null;
