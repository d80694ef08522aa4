// Renders /openapi.json with Swagger UI (served from this gateway, no CDN).
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: false,
    tryItOutEnabled: false,
  });
});
