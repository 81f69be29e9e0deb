import Foundation
import ServiceRuntime

/// Bounds how many test clusters run at once. Every test starts together, and past some
/// number of clusters (seven processes' worth of servers, pools and migrations each) their
/// start-ups share two cores so thinly that they outlast any start-up deadline; waiting here for
/// a slot costs nothing against those deadlines, nor against the test's own time limit, which
/// starts once the slot is taken. `BAAS_TEST_CLUSTERS` sets the number (default four per core,
/// at least six). A cluster started inside another's body takes no second slot.
actor ClusterSlots {
    /// The slots every cluster of the test process shares.
    static let shared = ClusterSlots(
        count: ProcessInfo.processInfo.environment["BAAS_TEST_CLUSTERS"].flatMap(Int.init)
            ?? max(6, 4 * ProcessInfo.processInfo.activeProcessorCount))

    /// Whether the current task already holds a slot.
    @TaskLocal static var held = false

    private var free: Int
    private var waiting: [(ticket: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    private var issued = 0

    init(count: Int) {
        free = max(1, count)
    }

    /// Runs `body` holding a slot (or the one the task holds already), cancelled and failed with
    /// ``TimeLimitExceeded`` once `timeLimit` has passed since the slot was taken. Waiting for a
    /// slot ends with `CancellationError` when the task is cancelled.
    static func withSlot<Result: Sendable>(
        timeLimit: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        if held { return try await body() }
        try await shared.take()
        // A slot handed over just as the task was cancelled goes to the next waiter.
        guard !Task.isCancelled else {
            await shared.give()
            throw CancellationError()
        }
        do {
            let result = try await $held.withValue(true) { try await within(timeLimit, body) }
            await shared.give()
            return result
        } catch {
            await shared.give()
            throw error
        }
    }

    /// Runs `body`, cancelling it once `limit` has passed.
    static func within<Result: Sendable>(
        _ limit: Duration, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        do {
            // The task group under `withTimeout` ends only after `body` has, so it never escapes.
            return try await withoutActuallyEscaping(body) { escapable in
                try await withTimeout(limit) { try await escapable() }
            }
        } catch is TimeoutError {
            throw TimeLimitExceeded(limit: limit)
        }
    }

    private func take() async throws {
        if free > 0 {
            free -= 1
            return
        }
        issued += 1
        let ticket = issued
        // `give` hands its slot straight to the first waiter; a cancelled waiter leaves the queue.
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiting.append((ticket, continuation))
                }
            }
        } onCancel: {
            Task { await self.leave(ticket) }
        }
    }

    private func leave(_ ticket: Int) {
        guard let index = waiting.firstIndex(where: { $0.ticket == ticket }) else { return }
        waiting.remove(at: index).continuation.resume(throwing: CancellationError())
    }

    private func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().continuation.resume()
        }
    }
}

/// A test ran past its own time limit, counted from when it took its ``ClusterSlots`` slot.
public struct TimeLimitExceeded: Error, CustomStringConvertible {
    /// The limit it ran past.
    public let limit: Duration

    public var description: String {
        "the test ran past its time limit of \(limit) (counted from when it took its cluster slot; "
            + "waiting for one does not count) and was cancelled"
    }
}
