import Logging
import PostgresSupport
import PostgresNIO
import ServiceLifecycle

/// Listens on the `baas_catalog` channel and drops the named app from the cache, so a schema
/// change made by any instance is seen by all. It holds one pool connection while it runs and
/// reconnects after a failure, dropping the whole cache since news may have been missed.
public struct CatalogListener: Service {
    /// The channel schema changes are announced on; the payload is ``payload(appID:version:)``.
    public static let channel = "baas_catalog"

    /// `<app id> <catalog version>`: the version lets a cache that already holds the change
    /// (the instance that made it) keep its entry.
    public static func payload(appID: String, version: Int64) -> String {
        "\(appID) \(version)"
    }

    let database: PostgresClient
    let cache: CatalogCache
    let logger: Logger

    /// Creates a listener feeding `cache`.
    public init(database: PostgresClient, cache: CatalogCache, logger: Logger) {
        self.database = database
        self.cache = cache
        self.logger = logger
    }

    public func run() async throws {
        await PostgresClient.settle()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await listenOnce()
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("catalog listener lost its connection", metadata: ["error": "\(error)"])
                }
                await cache.setListening(false)
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func listenOnce() async throws {
        try await database.withConnection { connection in
            try await connection.listen(on: Self.channel) { notifications in
                await cache.setListening(true)
                for try await notification in notifications {
                    let parts = notification.payload.split(separator: " ")
                    if parts.count == 2, let version = Int64(parts[1]) {
                        await cache.invalidate(String(parts[0]), below: version)
                    } else {
                        await cache.invalidateAll()
                    }
                }
            }
        }
    }
}
