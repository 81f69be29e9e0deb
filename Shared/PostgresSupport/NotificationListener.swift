import Logging
import PostgresNIO
import ServiceLifecycle

/// Listens on one `LISTEN/NOTIFY` channel and hands every payload to a consumer — the way
/// caches in every instance learn of changes made by any other. It holds one pool connection
/// while it runs and reconnects after a failure; the consumer hears when listening starts and
/// stops, since news may have been missed in between.
public struct NotificationListener: Service {
    /// What a listener feeds.
    public protocol Consumer: Sendable {
        /// Whether the listener is subscribed; while it is not, nothing cached can be trusted.
        func setListening(_ listening: Bool) async
        /// One notification's payload.
        func receive(_ payload: String) async
    }

    let database: PostgresClient
    let channel: String
    let consumer: any Consumer
    let logger: Logger

    /// Creates a listener on `channel` feeding `consumer`.
    public init(database: PostgresClient, channel: String, consumer: any Consumer, logger: Logger) {
        self.database = database
        self.channel = channel
        self.consumer = consumer
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
                    logger.warning("listener lost its connection", metadata: ["channel": "\(channel)", "error": "\(error)"])
                }
                await consumer.setListening(false)
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func listenOnce() async throws {
        try await database.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                await consumer.setListening(true)
                for try await notification in notifications {
                    await consumer.receive(notification.payload)
                }
            }
        }
    }
}
