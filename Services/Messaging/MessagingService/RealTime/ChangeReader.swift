import DataEngine
import Logging
import PostgresNIO
import PostgresSupport
import ServiceLifecycle

/// Reads change events for ``DataFeed`` from a temporary logical replication slot on one pool
/// connection, held only while some subscription here needs events: every `pollInterval`
/// (immediately again while a read comes back full), and drops the slot once nobody does.
struct ChangeReader: Service {
    /// Log records read per round at most (whole transactions: a bound, not exact).
    static let batch = 2_000
    /// How long a slot outlives its last subscription (subscriptions come and go; a new slot
    /// waits for every transaction under way).
    static let idleGrace: Duration = .seconds(30)

    let database: PostgresClient
    let feed: DataFeed
    let pollInterval: Duration
    let logger: Logger

    func run() async throws {
        await PostgresClient.settle()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                guard await feed.wantsSlot else {
                    try? await Task.sleep(for: pollInterval)
                    continue
                }
                do {
                    try await database.withConnection { connection in try await read(on: connection) }
                } catch {
                    if Task.isCancelled { return }
                    logger.warning("real-time change slot lost", metadata: ["error": "\(error)"])
                    await feed.slotLost(error)
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// Opens a slot and reads it until nobody has needed events for ``idleGrace``; a slot
    /// that fails is dropped before the connection goes back to the pool.
    private func read(on connection: PostgresConnection) async throws {
        let slot = try await ChangeSlot.create(on: connection, logger: logger)
        await feed.slotOpened()
        do {
            var idleSince: ContinuousClock.Instant?
            while !Task.isCancelled {
                let (events, records) = try await slot.read(limit: Self.batch)
                if !events.isEmpty { await feed.deliver(events) }
                if records >= Self.batch { continue }
                if await feed.wantsSlot {
                    idleSince = nil
                } else if let since = idleSince, since.duration(to: .now) > Self.idleGrace {
                    if await feed.closeIfIdle() { break }
                } else if idleSince == nil {
                    idleSince = .now
                }
                try await Task.sleep(for: pollInterval)
            }
        } catch {
            try? await slot.drop()
            throw error
        }
        try await slot.drop()
    }
}
