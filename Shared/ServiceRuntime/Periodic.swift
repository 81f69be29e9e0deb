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
