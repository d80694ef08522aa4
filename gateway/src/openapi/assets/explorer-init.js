/* global SwaggerUIBundle */
// The interactive console (/docs/explorer): Swagger UI (served from this gateway, no CDN) on /openapi.json,
// collapsed by tag so the page renders quickly (a deep link from /docs, #/<tag>/<operationId>, opens that
// operation); /docs is the reference that paints at once.
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'none',
    defaultModelsExpandDepth: -1,
    persistAuthorization: false,
    tryItOutEnabled: false,
  });
});
