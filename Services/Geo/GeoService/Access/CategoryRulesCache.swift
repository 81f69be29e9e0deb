import PostgresSupport

/// Each app's category permission cells, read once and kept until a change is announced on
/// ``channel`` (by any instance) or made here; at most ``capacity`` apps, the oldest entry
/// dropped first. While no listener is subscribed nothing is kept, so a missed announcement
/// can never leave a stale rule in force.
actor CategoryRulesCache: NotificationListener.Consumer {
    /// The `LISTEN/NOTIFY` channel that announces an app's changed cells (payload: the app id).
    static let channel = "geo_category_rules"
    /// The most apps kept.
    static let capacity = 1_000

    private var entries: [String: CategoryRules] = [:]
    /// Apps in the order their entries were kept, oldest first.
    private var order: [String] = []
    /// Bumped by every change and every (un)subscription, so a load begun before one is served
    /// but not kept.
    private var generation = 0
    private var isListening = false
    private let loader: @Sendable (String) async throws -> CategoryRules

    /// Creates a cache that reads an app's cells with `loader`.
    init(loader: @escaping @Sendable (String) async throws -> CategoryRules) {
        self.loader = loader
    }

    /// The app's cells.
    func rules(app: String) async throws -> CategoryRules {
        if let entry = entries[app] { return entry }
        let startedIn = generation
        let rules = try await loader(app)
        if isListening, generation == startedIn, entries[app] == nil { keep(rules, app: app) }
        return rules
    }

    /// Forgets the app's cells (a change made or announced).
    func invalidate(_ app: String) {
        generation += 1
        entries[app] = nil
        order.removeAll { $0 == app }
    }

    func setListening(_ listening: Bool) {
        isListening = listening
        generation += 1
        entries.removeAll()
        order.removeAll()
    }

    func receive(_ payload: String) {
        invalidate(payload)
    }

    private func keep(_ rules: CategoryRules, app: String) {
        if order.count >= Self.capacity { entries[order.removeFirst()] = nil }
        entries[app] = rules
        order.append(app)
    }
}
