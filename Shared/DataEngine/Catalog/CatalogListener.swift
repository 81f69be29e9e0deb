import Logging
import PostgresSupport
import PostgresNIO
import ServiceLifecycle

/// Listens on the `baas_catalog` channel and drops the named app from the cache, so a schema
/// change made by any instance is seen by all. It holds one pool connection while it runs and
/// reconnects after a failure, dropping the whole cache since news may have been missed.
public struct CatalogListener: Service {
    /// The channel schema changes are announced on; the payload is the app id.
    public static let channel = "baas_catalog"

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
                    await cache.invalidate(notification.payload)
                }
            }
        }
    }
}
