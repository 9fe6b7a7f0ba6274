import type { Metrics } from '../metrics/metrics.js';
import { noTracer, type Tracer } from './tracer.js';
import type { TracingConfig } from './tracing-config.js';

/**
 * The tracer of a process: `noTracer` when tracing is off (no OpenTelemetry module is even
 * loaded), else the SDK-backed one, imported only now.
 *
 * @example const tracer = await loadTracer(config.tracing, { metrics, role: 'worker', instanceId: workerId })
 */
export async function loadTracer(
  settings: TracingConfig | null,
  options: { metrics: Pick<Metrics, 'spansExported' | 'spansDropped'>; role: string; instanceId: string },
): Promise<Tracer> {
  if (settings === null) return noTracer;
  const { createOtelTracer } = await import('./otel-tracer.js');
  return createOtelTracer({
    settings,
    resource: { role: options.role, instanceId: options.instanceId },
    onExported: (count) => options.metrics.spansExported(count),
    onDropped: (reason, count) => options.metrics.spansDropped(reason, count),
  });
}
