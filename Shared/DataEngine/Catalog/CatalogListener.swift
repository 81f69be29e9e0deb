import InternalProtocol
import PostgresSupport

extension CatalogCache: NotificationListener.Consumer {
    /// Reads a ``CatalogChannel`` payload; anything unreadable drops every entry.
    package func receive(_ payload: String) {
        let parts = payload.split(separator: " ")
        if parts.count == 2, let version = Int64(parts[1]) {
            invalidate(String(parts[0]), below: version)
        } else {
            invalidateAll()
        }
    }
}
