import Synchronization

/// Values computed from keys and remembered, at most `capacity` of them: when full, the memo
/// starts again empty (cheaper than tracking recency, and a working set smaller than the bound
/// is back within a few calls).
package final class BoundedMemo<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let entries = Mutex<[Key: Value]>([:])
    private let capacity: Int

    /// A memo of at most `capacity` entries.
    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The value remembered for `key`, or `compute(key)` remembered (a thrown error is not).
    package func value(for key: Key, _ compute: (Key) throws -> Value) rethrows -> Value {
        if let remembered = entries.withLock({ $0[key] }) { return remembered }
        let value = try compute(key)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = value
        }
        return value
    }
}
