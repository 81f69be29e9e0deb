import Logging
import PostgresNIO
import PostgresSupport
import ServiceLifecycle

/// Keeps the change log fed: every messaging-service tries to relay, and the one holding the
/// lock copies the slot's events into the log (``ChangeLog/relay(records:)``). While this
/// instance has data subscribers it tries every `pollInterval` (at once again after a full
/// batch); otherwise every `idleInterval`, so that a slot left by other instances' subscribers
/// is still read and, once nothing is watched, dropped.
struct ChangeRelay: Service {
    /// Log records read per round at most (whole transactions: a bound, not exact).
    static let batch = 2_000

    let log: ChangeLog
    let feed: DataFeed
    let pollInterval: Duration
    var idleInterval: Duration = .seconds(1)
    let logger: Logger

    func run() async throws {
        await PostgresClient.settle()
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    if let relayed = try await log.relay(records: Self.batch) {
                        RTMetrics.relayed(relayed.events)
                        if !relayed.complete { continue }
                    }
                } catch {
                    if Task.isCancelled { return }
                    logger.warning(
                        "real-time change events not relayed", metadata: ["error": "\(String(reflecting: error))"])
                    try? await Task.sleep(for: .seconds(1))
                    continue
                }
                try? await Task.sleep(for: await feed.isActive ? pollInterval : idleInterval)
            }
        }
    }
}
