import InternalProtocol

/// The in-memory catalog of the apps this process has served, at most ``capacity`` of them
/// (beyond it an entry is dropped to make room; a dropped app is loaded again on its next
/// request). Reads never query the catalog tables: a miss loads an app once (concurrent misses
/// share the load), and the catalog listener drops an app's entry when any instance announces a
/// newer catalog version than the entry holds.
package actor CatalogCache {
    /// The most apps kept.
    package nonisolated let capacity: Int
    private var entries: [String: AppCatalog] = [:]
    private var loads: [String: Task<AppCatalog, any Error>] = [:]
    /// The newest catalog version announced per app; nothing older may be kept.
    private var announced: [String: Int64] = [:]
    /// Bumped whenever every entry is dropped, so loads begun before cannot be kept.
    private var epoch = 0
    private let loader: @Sendable (String) async throws -> AppCatalog
    /// True while a listener is subscribed to schema changes (entries can be trusted).
    package private(set) var isListening = false

    /// Creates a cache of at most `capacity` apps that loads misses with `loader`.
    package init(capacity: Int = 1_000, loader: @escaping @Sendable (String) async throws -> AppCatalog) {
        self.capacity = max(1, capacity)
        self.loader = loader
    }

    /// The apps whose catalogs are kept now.
    package var count: Int { entries.count }

    /// The app's catalog, loading it on a miss, and reading the committed one when the running
    /// request needs a newer version than the entry holds (``CatalogFreshness``): another
    /// service changed it a moment ago, and its announcement has not arrived yet.
    package func catalog(for appID: String) async throws -> AppCatalog {
        var catalog = try await cachedOrLoaded(appID)
        if catalog.version < CatalogFreshness.required(for: appID) {
            catalog = try await current(for: appID)
        }
        CatalogFreshness.note(catalog.version, for: appID)
        return catalog
    }

    private func cachedOrLoaded(_ appID: String) async throws -> AppCatalog {
        if let entry = entries[appID] { return entry }
        if let load = loads[appID] { return try await load.value }
        let startedIn = epoch
        let load = Task { [loader] in try await loader(appID) }
        loads[appID] = load
        defer { if loads[appID] == load { loads[appID] = nil } }
        let catalog = try await load.value
        // A load older than an announcement or a flush is served to this caller but not kept.
        if startedIn == epoch { keep(catalog) }
        return catalog
    }

    /// The app's catalog as committed now, read past the entry (and kept, unless a newer version
    /// has been announced meanwhile): what another service changed a moment ago is in it even
    /// before its announcement arrives.
    package func current(for appID: String) async throws -> AppCatalog {
        let startedIn = epoch
        let catalog = try await loader(appID)
        if startedIn == epoch { keep(catalog) }
        CatalogFreshness.note(catalog.version, for: appID)
        return catalog
    }

    /// Replaces the app's entry with a catalog read inside the transaction that changed it,
    /// unless a newer version has been announced meanwhile.
    package func store(_ catalog: AppCatalog) {
        keep(catalog)
        CatalogFreshness.note(catalog.version, for: catalog.appID)
    }

    /// Records that the app's catalog reached `version` and drops an entry older than that.
    package func invalidate(_ appID: String, below version: Int64) {
        if announced[appID] == nil, announced.count >= 4 * capacity {
            // Forgetting announcements would let an older load be kept: start afresh instead.
            announced.removeAll()
            invalidateAll()
        }
        announced[appID] = max(announced[appID, default: 0], version)
        // A request that made the change (an object's first ACL cell) reports its version.
        CatalogFreshness.note(version, for: appID)
        if let entry = entries[appID], entry.version < version {
            entries[appID] = nil
        }
        // A load under way may predate the change; later callers start afresh, and its result
        // is kept only if its version covers the announcement.
        loads[appID] = nil
    }

    /// Records whether a listener is subscribed; either way every entry is dropped, since news
    /// may have been missed before the subscription or after the connection was lost.
    package func setListening(_ listening: Bool) {
        isListening = listening
        invalidateAll()
    }

    /// Drops every entry.
    package func invalidateAll() {
        epoch += 1
        entries.removeAll()
        loads.removeAll()
    }

    private func keep(_ catalog: AppCatalog) {
        guard catalog.version >= announced[catalog.appID, default: 0] else { return }
        if let entry = entries[catalog.appID], entry.version > catalog.version { return }
        if entries[catalog.appID] == nil, entries.count >= capacity { entries.remove(at: entries.startIndex) }
        entries[catalog.appID] = catalog
    }
}
