/// The in-memory catalog of every app this process has served. Reads never query the
/// catalog tables: a miss loads an app once (concurrent misses share the load), and
/// ``CatalogListener`` drops an app's entry when any instance changes its schema.
public actor CatalogCache {
    private var entries: [String: AppCatalog] = [:]
    private var loads: [String: Task<AppCatalog, any Error>] = [:]
    private var generations: [String: Int] = [:]
    private var globalGeneration = 0
    private let loader: @Sendable (String) async throws -> AppCatalog
    /// True while a listener is subscribed to schema changes (entries can be trusted).
    public private(set) var isListening = false

    /// Creates a cache that loads misses with `loader`.
    public init(loader: @escaping @Sendable (String) async throws -> AppCatalog) {
        self.loader = loader
    }

    /// The app's catalog, loading it on a miss.
    public func catalog(for appID: String) async throws -> AppCatalog {
        if let entry = entries[appID] { return entry }
        if let load = loads[appID] { return try await load.value }
        let generation = generation(of: appID)
        let load = Task { [loader] in try await loader(appID) }
        loads[appID] = load
        defer { loads[appID] = nil }
        let catalog = try await load.value
        // An invalidation that arrived while loading means the load may be stale: serve it
        // to this caller but do not keep it.
        if generation == self.generation(of: appID) { entries[appID] = catalog }
        return catalog
    }

    /// Replaces the app's entry with a catalog read inside the transaction that changed it.
    public func store(_ catalog: AppCatalog) {
        bump(catalog.appID)
        entries[catalog.appID] = catalog
    }

    /// Drops the app's entry.
    public func invalidate(_ appID: String) {
        bump(appID)
        entries[appID] = nil
        loads[appID] = nil
    }

    /// Records whether a listener is subscribed; either way every entry is dropped, since news
    /// may have been missed before the subscription or after the connection was lost.
    public func setListening(_ listening: Bool) {
        isListening = listening
        invalidateAll()
    }

    /// Drops every entry.
    public func invalidateAll() {
        globalGeneration += 1
        entries.removeAll()
        loads.removeAll()
    }

    private func generation(of appID: String) -> [Int] {
        [globalGeneration, generations[appID, default: 0]]
    }

    private func bump(_ appID: String) {
        generations[appID, default: 0] += 1
    }
}
