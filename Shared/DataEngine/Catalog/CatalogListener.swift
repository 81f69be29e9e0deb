import PostgresSupport

/// The `baas_catalog` channel: every schema change is announced on it, and each process's
/// ``CatalogCache`` drops the named app when the announced version is newer than its entry.
public enum CatalogChannel {
    /// The channel's name; the payload is ``payload(appID:version:)``.
    public static let name = "baas_catalog"

    /// `<app id> <catalog version>`: the version lets a cache that already holds the change
    /// (the instance that made it) keep its entry.
    public static func payload(appID: String, version: Int64) -> String {
        "\(appID) \(version)"
    }
}

extension CatalogCache: NotificationListener.Consumer {
    /// Reads a ``CatalogChannel`` payload; anything unreadable drops every entry.
    public func receive(_ payload: String) {
        let parts = payload.split(separator: " ")
        if parts.count == 2, let version = Int64(parts[1]) {
            invalidate(String(parts[0]), below: version)
        } else {
            invalidateAll()
        }
    }
}
