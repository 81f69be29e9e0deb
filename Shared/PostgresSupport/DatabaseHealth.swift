import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether PostgreSQL can be reached, watched over one connection of its own (outside the pool,
/// so a busy pool never looks like an outage): a query every `interval`, and while the server
/// cannot be reached, a new connection every quarter second until it can. Only a refused or
/// failed connection counts as unreachable; a probe that gets no answer within `probeTimeout`
/// (a connection the server ended may never answer) is retried on a new connection first.
///
/// Requests arriving while it is unreachable are refused at once rather than waiting for their
/// deadline on a pool that cannot connect (the pool queues them for a minute before it gives up).
package final class DatabaseHealth: Service, Sendable {
    private let configuration: DatabaseConfiguration
    private let interval: Duration
    private let probeTimeout: Duration
    private let logger: Logger
    private let reachable = Atomic<Bool>(true)
    /// Who waits for the next outage (``racing(_:)``), by a number of their own.
    private let waiters = Mutex<(next: Int, waiting: [Int: CheckedContinuation<Void, Never>])>((0, [:]))

    /// Watches the server `configuration` names.
    package init(
        configuration: DatabaseConfiguration, interval: Duration = .milliseconds(500),
        probeTimeout: Duration = .seconds(2),
        logger: Logger
    ) {
        self.configuration = configuration
        self.interval = interval
        self.probeTimeout = probeTimeout
        self.logger = logger
    }

    /// False from a refused or failed connection until a new one answers.
    package var isReachable: Bool { reachable.load(ordering: .relaxed) }

    package func run() async throws {
        await cancelWhenGracefulShutdown { await self.watch() }
    }

    private struct ProbeTimedOut: Error {}
    private struct ProbeFailed: Error {}

    private func watch() async {
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            let connection: PostgresConnection
            do {
                connection = try await PostgresConnection.connect(
                    configuration: configuration.connectionConfiguration, id: attempt, logger: logger)
            } catch {
                if Task.isCancelled { return }
                mark(reachable: false)
                try? await Task.sleep(for: .milliseconds(250))
                continue
            }
            mark(reachable: true)
            do {
                while !Task.isCancelled {
                    try await probe(connection)
                    try await Task.sleep(for: interval)
                }
            } catch is ProbeTimedOut {
                // Unknown: a new connection decides.
            } catch {
                if !Task.isCancelled { mark(reachable: false) }
            }
            Task { try? await connection.close() }
        }
    }

    private enum Outcome { case answered, failed, timedOut }

    /// `SELECT 1` on `connection`: throws when it fails, ``ProbeTimedOut`` after `probeTimeout`.
    /// The query runs in a task of its own, since a query on a connection the server ended may
    /// ignore cancellation as well as never answer.
    private func probe(_ connection: PostgresConnection) async throws {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let pending = Mutex<CheckedContinuation<Outcome, Never>?>(continuation)
            let finish: @Sendable (Outcome) -> Void = { outcome in
                pending.withLock { $0.take() }?.resume(returning: outcome)
            }
            let query = Task { [logger] in
                let answered = (try? await connection.query("SELECT 1", logger: logger).collect()) != nil
                finish(answered ? .answered : .failed)
            }
            Task { [probeTimeout] in
                try? await Task.sleep(for: probeTimeout)
                finish(.timedOut)
                query.cancel()
            }
        }
        switch outcome {
        case .answered: return
        case .failed: throw ProbeFailed()
        case .timedOut: throw ProbeTimedOut()
        }
    }

    /// `body`, failed with `unreachable` as soon as the database is found unreachable while it
    /// runs (what a request waiting on the pool would otherwise wait out). It costs a task group,
    /// so only requests without a deadline of their own (streams) use it.
    package func racing<Result: Sendable>(
        unreachable: any Error, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        guard isReachable else { throw unreachable }
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                await self.untilUnreachable()
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else { throw unreachable }
            return result
        }
    }

    /// Returns once the database is found unreachable, or when the task is cancelled.
    private func untilUnreachable() async {
        let number = waiters.withLock { state in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = waiters.withLock { state in
                    guard isReachable, !Task.isCancelled else { return true }
                    state.waiting[number] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            waiters.withLock { $0.waiting.removeValue(forKey: number) }?.resume()
        }
    }

    private func mark(reachable now: Bool) {
        let before = reachable.exchange(now, ordering: .relaxed)
        guard before != now else { return }
        if !now {
            let waiting = waiters.withLock { state in
                defer { state.waiting = [:] }
                return state.waiting.values
            }
            for continuation in waiting { continuation.resume() }
        }
        if now {
            logger.notice("database reachable again")
        } else {
            logger.warning("database unreachable: requests are refused with 503 until it answers")
        }
    }
}
