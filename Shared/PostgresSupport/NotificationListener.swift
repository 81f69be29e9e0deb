import Logging
import PostgresNIO
import ServiceLifecycle

/// Listens on `LISTEN/NOTIFY` channels and hands every payload to the channel's consumer — the
/// way caches in every instance learn of changes made by any other. It holds one pool connection
/// for all its channels while it runs and reconnects after a failure; consumers hear when
/// listening starts and stops, since news may have been missed in between.
package struct NotificationListener: Service {
    /// What a listener feeds.
    package protocol Consumer: Sendable {
        /// Whether the listener is subscribed; while it is not, nothing cached can be trusted.
        func setListening(_ listening: Bool) async
        /// One notification's payload.
        func receive(_ payload: String) async
    }

    let database: PostgresClient
    let channels: [(name: String, consumer: any Consumer)]
    let logger: Logger

    /// Creates a listener on `channel` feeding `consumer`.
    package init(database: PostgresClient, channel: String, consumer: any Consumer, logger: Logger) {
        self.init(database: database, channels: [(channel, consumer)], logger: logger)
    }

    /// Creates a listener on several channels, each feeding its consumer, over one connection.
    package init(database: PostgresClient, channels: [(name: String, consumer: any Consumer)], logger: Logger) {
        self.database = database
        self.channels = channels
        self.logger = logger
    }

    package func run() async throws {
        await PostgresClient.settle()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await listenOnce()
                } catch {
                    if Task.isCancelled { return }
                    logger.warning(
                        "listener lost its connection",
                        metadata: ["channels": "\(channels.map(\.name))", "error": "\(error)"])
                }
                for (_, consumer) in channels { await consumer.setListening(false) }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func listenOnce() async throws {
        try await database.withConnection { connection in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (channel, consumer) in channels {
                    group.addTask {
                        try await connection.listen(on: channel) { notifications in
                            await consumer.setListening(true)
                            for try await notification in notifications {
                                await consumer.receive(notification.payload)
                            }
                        }
                    }
                }
                // One channel's end ends them all: the connection is reopened for every channel.
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
