import Logging
import ServiceLifecycle

/// Background work repeated every `interval` until graceful shutdown. Each turn waits first
/// (leaving the start-up migrations time to create the tables), then runs `work`; a failure is
/// logged as `failure` and the next turn tries again, unless shutdown cancelled it.
public func repeatUntilShutdown(
    every interval: Duration, logger: Logger, failure: Logger.Message, _ work: @escaping @Sendable () async throws -> Void
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
public struct PeriodicService: Service {
    let interval: Duration
    let logger: Logger
    let failure: Logger.Message
    let work: @Sendable () async throws -> Void

    /// Creates the service.
    public init(every interval: Duration, logger: Logger, failure: Logger.Message, _ work: @escaping @Sendable () async throws -> Void) {
        self.interval = interval
        self.logger = logger
        self.failure = failure
        self.work = work
    }

    public func run() async throws {
        await repeatUntilShutdown(every: interval, logger: logger, failure: failure, work)
    }
}
