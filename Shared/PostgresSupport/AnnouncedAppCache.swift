/// Each app's value, read once and kept until a change is announced on ``channel`` (by any
/// instance, with `pg_notify(channel, appId)`) or made here; at most ``capacity`` apps, the
/// oldest entry dropped first. While no listener is subscribed nothing is kept, so a missed
/// announcement can never leave a stale value in force.
package actor AnnouncedAppCache<Value: Sendable>: NotificationListener.Consumer {
    /// The `LISTEN/NOTIFY` channel that announces an app's change (payload: the app id).
    package nonisolated let channel: String
    /// The most apps kept.
    package nonisolated let capacity: Int

    private var entries: [String: Value] = [:]
    /// Apps in the order their entries were kept, oldest first.
    private var order: [String] = []
    /// Bumped by every change and every (un)subscription, so a load begun before one is served
    /// but not kept.
    private var generation = 0
    private var isListening = false
    private let loader: @Sendable (String) async throws -> Value

    /// Creates a cache that reads an app's value with `loader`.
    package init(channel: String, capacity: Int = 1_000, loader: @escaping @Sendable (String) async throws -> Value) {
        self.channel = channel
        self.capacity = capacity
        self.loader = loader
    }

    /// The app's value.
    package func value(app: String) async throws -> Value {
        if let entry = entries[app] { return entry }
        let startedIn = generation
        let value = try await loader(app)
        if isListening, generation == startedIn, entries[app] == nil { keep(value, app: app) }
        return value
    }

    /// Forgets the app's value (a change made or announced).
    package func invalidate(_ app: String) {
        generation += 1
        entries[app] = nil
        order.removeAll { $0 == app }
    }

    package func setListening(_ listening: Bool) {
        isListening = listening
        generation += 1
        entries.removeAll()
        order.removeAll()
    }

    package func receive(_ payload: String) {
        invalidate(payload)
    }

    private func keep(_ value: Value, app: String) {
        if order.count >= capacity { entries[order.removeFirst()] = nil }
        entries[app] = value
        order.append(app)
    }
}
