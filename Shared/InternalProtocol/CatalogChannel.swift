/// The `baas_catalog` channel: every schema change is announced on it, and each process's
/// catalog cache drops the named app when the announced version is newer than its entry.
public enum CatalogChannel {
    /// The channel's name; the payload is ``payload(appID:version:)``.
    public static let name = "baas_catalog"

    /// `<app id> <catalog version>`: the version lets a cache that already holds the change
    /// (the instance that made it) keep its entry.
    public static func payload(appID: String, version: Int64) -> String {
        "\(appID) \(version)"
    }
}
