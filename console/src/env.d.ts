// Stylesheets are imported for their side effect: Vite emits them as one CSS file.
declare module "*.css";
