/// The `baas_catalog` channel: every schema change is announced on it, and each process's
/// catalog cache drops the named app when the announced version is newer than its entry.
package enum CatalogChannel {
    /// The channel's name; the payload is ``payload(appID:version:)``.
    package static let name = "baas_catalog"

    /// `<app id> <catalog version>`: the version lets a cache that already holds the change
    /// (the instance that made it) keep its entry.
    package static func payload(appID: String, version: Int64) -> String {
        "\(appID) \(version)"
    }
}
