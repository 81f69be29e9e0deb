/// An async mutex per key: holders of one key run one at a time, in arrival order; other
/// keys are unaffected. (An actor alone does not serialise work that awaits.)
actor KeyedLock {
    private var held: Set<String> = []
    private var waiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    private func lock(_ key: String) async {
        guard held.contains(key) else {
            held.insert(key)
            return
        }
        await withCheckedContinuation { waiters[key, default: []].append($0) }
    }

    private func unlock(_ key: String) {
        guard var queue = waiters[key], !queue.isEmpty else {
            held.remove(key)
            waiters[key] = nil
            return
        }
        let next = queue.removeFirst()
        waiters[key] = queue
        next.resume()  // ownership passes straight to the next waiter
    }

    /// Runs `body` while holding `key`.
    nonisolated func withLock<Result: Sendable>(_ key: String, _ body: () async throws -> Result) async throws
        -> Result
    {
        await lock(key)
        do {
            let result = try await body()
            await unlock(key)
            return result
        } catch {
            await unlock(key)
            throw error
        }
    }
}
