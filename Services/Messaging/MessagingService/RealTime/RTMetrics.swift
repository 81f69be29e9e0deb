import Metrics

/// What `/metrics` says of real-time: open connections and live subscriptions by kind (gauges),
/// and counters of data change events relayed into the log and of connections closed for
/// falling behind.
enum RTMetrics {
    private static let connections = Meter(label: "baas_rt_connections")
    private static let dataSubscriptions = Meter(label: "baas_rt_subscriptions", dimensions: [("kind", "data")])
    private static let channelSubscriptions = Meter(label: "baas_rt_subscriptions", dimensions: [("kind", "channel")])
    private static let eventsRelayed = Counter(label: "baas_rt_change_events_relayed_total")
    private static let slowDisconnects = Counter(label: "baas_rt_slow_disconnects_total")

    /// A connection opened (`by: 1`) or closed (`by: -1`).
    static func connections(by change: Int) {
        connections.increment(by: Double(change))
    }

    /// A data (or channel) subscription began (`by: 1`) or ended (`by: -1`).
    static func subscriptions(data: Bool, by change: Int) {
        (data ? dataSubscriptions : channelSubscriptions).increment(by: Double(change))
    }

    /// `count` events were copied into the change log.
    static func relayed(_ count: Int) {
        eventsRelayed.increment(by: count)
    }

    /// A connection was closed for falling behind.
    static func slowDisconnect() {
        slowDisconnects.increment()
    }
}
