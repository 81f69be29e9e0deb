/// Raised by ``withTimeout(_:operation:)`` when the operation did not finish in time.
package struct TimeoutError: Error, Sendable {}

/// Runs `operation`, cancelling it and throwing ``TimeoutError`` after `duration`.
package func withTimeout<Result: Sendable>(
    _ duration: Duration, operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    try await withThrowingTaskGroup(of: Result.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: duration)
            throw TimeoutError()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeoutError() }
        return first
    }
}
