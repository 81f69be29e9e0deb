import Foundation
import InternalProtocol
import ServiceRuntime
import Testing

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

    /// When the first test asked for a slot: the origin of the times ``report`` writes.
    private static let firstAsked = ContinuousClock.now

    /// Whether the current task already holds a slot.
    @TaskLocal static var held = false

    private var free: Int
    private var waiting: [Waiter] = []
    private var issued = 0

    init(count: Int) {
        free = max(1, count)
    }

    /// Runs `body` holding a slot (or the one the task holds already), cancelled and failed with
    /// ``TimeLimitExceeded`` once `timeLimit` has passed since the slot was taken. Waiting for a
    /// slot ends with `CancellationError` when the task is cancelled.
    /// - Parameter mostlyWaiting: whether the test spends most of its time waiting out a deadline
    ///   or an idle limit rather than on the CPU; such tests take slots first, so that their
    ///   waiting overlaps the others' work instead of ending the run on an idle machine.
    static func withSlot<Result: Sendable>(
        timeLimit: Duration, mostlyWaiting: Bool = false, _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        if held { return try await body() }
        let clock = ContinuousClock()
        let asked = clock.now
        _ = firstAsked
        try await shared.take(Waiter.Rank(mostlyWaiting: mostlyWaiting, limit: timeLimit))
        // A slot handed over just as the task was cancelled goes to the next waiter.
        guard !Task.isCancelled else {
            await shared.give()
            throw CancellationError()
        }
        let taken = clock.now
        defer { report(asked: asked - firstAsked, waited: taken - asked, held: clock.now - taken) }
        do {
            let result = try await $held.withValue(true) { try await within(timeLimit, body) }
            await shared.give()
            return result
        } catch {
            await shared.give()
            throw error
        }
    }

    /// Writes how long a test waited for its slot and held it to the log (not the terminal), so
    /// a slow run shows whether its time went to queueing or to testing.
    private static func report(asked: Duration, waited: Duration, held: Duration) {
        let name = Test.current.map { "\($0.name)" } ?? "?"
        let seconds = { (duration: Duration) in String(format: "%.1f", Double(duration.wholeMilliseconds) / 1_000) }
        FileHandle.standardError.write(
            Data(
                "[cluster slot] \(name) asked at \(seconds(asked)) s, waited \(seconds(waited)) s, held \(seconds(held)) s\n"
                    .utf8))
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

    /// Takes a slot, or waits for one.
    private func take(_ rank: Waiter.Rank) async throws {
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
                    waiting.append(Waiter(rank: rank, ticket: ticket, continuation: continuation))
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
            let next = waiting.indices.min { waiting[$0].goesBefore(waiting[$1]) }!
            waiting.remove(at: next).continuation.resume()
        }
    }
}

/// A test waiting for a slot.
private struct Waiter {
    /// What orders waiters: those that mostly wait first, then those with longer limits (the
    /// long tests: started last, one would end the run alone on an idle machine).
    struct Rank {
        let mostlyWaiting: Bool
        let limit: Duration
    }

    let rank: Rank
    /// When it came: the order among equal ranks.
    let ticket: Int
    let continuation: CheckedContinuation<Void, any Error>

    func goesBefore(_ other: Waiter) -> Bool {
        if rank.mostlyWaiting != other.rank.mostlyWaiting { return rank.mostlyWaiting }
        if rank.limit != other.rank.limit { return rank.limit > other.rank.limit }
        return ticket < other.ticket
    }
}

/// A test ran past its own time limit, counted from when it took its ``ClusterSlots`` slot.
package struct TimeLimitExceeded: Error, CustomStringConvertible {
    /// The limit it ran past.
    package let limit: Duration

    package var description: String {
        "the test ran past its time limit of \(limit) (counted from when it took its cluster slot; "
            + "waiting for one does not count) and was cancelled"
    }
}
