// mirrorql: Swagger UI on the embedded OpenAPI description, with no request
// to any other host (no validator badge, no top bar).
window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/api/v1/docs/openapi.yml",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "BaseLayout"
  });
};
