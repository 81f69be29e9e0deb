import Logging
import Metrics
import Prometheus

/// Process-wide metrics: the Prometheus registry behind swift-metrics, bootstrapped on first use
/// (once per process, however many services it hosts).
package enum Observability {
    /// The registry `/metrics` emits.
    package static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        // Present from the first scrape on, so a scraper sees the process before any request.
        registry.makeGauge(
            descriptor: .init(
                namespace: "baas", metricName: "process", unitName: "up", helpText: "1 while the process runs")
        ).set(1.0)
        return registry
    }()

    /// Bootstraps logging for an executable: key=value lines on standard error at `level`.
    package static func bootstrapLogging(level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
