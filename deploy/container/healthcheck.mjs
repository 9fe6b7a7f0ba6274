// The image's HEALTHCHECK: exits 0 when /healthz answers 200 on the API's port (PORT) or, for a
// `zekt serve --role worker` container, which serves no API, on its probe port (ZEKT_METRICS_PORT).
// No curl or wget in a slim image: Node's own fetch.
const ports = [process.env.PORT || '3000', process.env.ZEKT_METRICS_PORT || '9464'];

for (const port of ports) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
    if (response.ok) process.exit(0);
  } catch {
    // Nothing listens there (the other role's port): try the next one.
  }
}
process.exit(1);
