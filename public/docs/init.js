// The API reference's settings (served as a file: the page's Content-Security-Policy allows no inline
// script). Everything it loads comes from this origin: the document, no web fonts, no proxy, no
// telemetry, no hosted AI agent or MCP panel.
/* global Scalar */
Scalar.createApiReference("#app", {
  url: "/openapi.json",
  baseServerURL: window.location.origin,
  servers: [{ url: window.location.origin, description: "This deployment" }],
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
  documentDownloadType: "json",
  // "Try it" sends the key typed into the reference as the X-API-KEY header (the ApiKeyAuth scheme).
  authentication: { preferredSecurityScheme: "ApiKeyAuth" },
  persistAuth: false,
  metaData: { title: "PromptEdge API reference" },
});
