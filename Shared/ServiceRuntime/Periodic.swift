import Logging
import ServiceLifecycle
import Synchronization

/// Background work repeated every `interval` until graceful shutdown. Each turn waits, then runs
/// `work`; a failure is logged as `failure` and the next turn tries again, unless shutdown
/// cancelled it.
package func repeatUntilShutdown(
    every interval: Duration, logger: Logger, failure: Logger.Message,
    _ work: @escaping @Sendable () async throws -> Void
) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            do {
                try await work()
            } catch {
                if !Task.isCancelled { logger.warning(failure, metadata: ["error": "\(String(reflecting: error))"]) }
            }
        }
    }
}

/// A background service running `work` every `interval` (``repeatUntilShutdown(every:logger:failure:_:)``).
package struct PeriodicService: Service {
    let interval: Duration
    let logger: Logger
    let failure: Logger.Message
    let work: @Sendable () async throws -> Void

    /// Creates the service.
    package init(
        every interval: Duration, logger: Logger, failure: Logger.Message,
        _ work: @escaping @Sendable () async throws -> Void
    ) {
        self.interval = interval
        self.logger = logger
        self.failure = failure
        self.work = work
    }

    package func run() async throws {
        await repeatUntilShutdown(every: interval, logger: logger, failure: failure, work)
    }
}

/// Opened once a process's migrations have run: its background services start only then, so
/// none meets a table that is still being created.
final class MigrationGate: Sendable {
    private let opened = Mutex(false)

    /// Whether the migrations have run.
    var isOpen: Bool { opened.withLock { $0 } }

    /// Lets the waiting services start.
    func open() {
        opened.withLock { $0 = true }
    }
}

/// A background service that starts once its process's ``MigrationGate`` opens (or never, if
/// the process shuts down first).
struct GatedService: Service {
    let gate: MigrationGate
    let service: any Service

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { [gate] in
                while !gate.isOpen { try await Task.sleep(for: .milliseconds(20)) }
            }
        } catch is CancellationError {
            return
        }
        try await service.run()
    }
}
