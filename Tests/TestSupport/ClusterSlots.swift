import Foundation

/// Bounds how many test clusters run at once. Every test starts together, and past some
/// number of clusters (seven processes' worth of servers, pools and migrations each) their
/// start-ups share two cores so thinly that they outlast any start-up deadline; waiting here for
/// a slot costs nothing against those deadlines. `BAAS_TEST_CLUSTERS` sets the number (default
/// four per core, at least six). A cluster started inside another's body takes no second slot.
actor ClusterSlots {
    /// The slots every cluster of the test process shares.
    static let shared = ClusterSlots(
        count: ProcessInfo.processInfo.environment["BAAS_TEST_CLUSTERS"].flatMap(Int.init)
            ?? max(6, 4 * ProcessInfo.processInfo.activeProcessorCount))

    /// Whether the current task already holds a slot.
    @TaskLocal static var held = false

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        free = max(1, count)
    }

    /// Runs `body` holding a slot (or the one the task holds already).
    static func withSlot<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        if held { return try await body() }
        await shared.take()
        do {
            let result = try await $held.withValue(true) { try await body() }
            await shared.give()
            return result
        } catch {
            await shared.give()
            throw error
        }
    }

    private func take() async {
        if free > 0 {
            free -= 1
            return
        }
        // `give` hands its slot straight to the first waiter.
        await withCheckedContinuation { waiting.append($0) }
    }

    private func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
