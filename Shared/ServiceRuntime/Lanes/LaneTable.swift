/// The exchanges open on one end of a lane (sockets, calls) by number, and the lane's state:
/// ended, or draining (closing once the last exchange has left). Kept under the lane's lock.
struct LaneTable<Entry> {
    private(set) var entries: [UInt32: Entry] = [:]
    private var nextID: UInt32 = 1
    /// Whether the lane has ended.
    private(set) var isClosed = false
    /// Whether the lane closes once its last exchange has left.
    private(set) var isDraining = false

    var count: Int { entries.count }

    subscript(id: UInt32) -> Entry? { entries[id] }

    /// Adds the entry `make` builds under a number no entry holds (never 0), for an exchange
    /// this end opens; nil once the lane has ended.
    mutating func open(_ make: (UInt32) -> Entry) -> Entry? {
        guard !isClosed else { return nil }
        var id = nextID
        while entries[id] != nil || id == 0 { id &+= 1 }
        nextID = id &+ 1
        let entry = make(id)
        entries[id] = entry
        return entry
    }

    /// Adds `entry` as the other end's exchange `id`; false when the number is taken or the
    /// lane has ended.
    mutating func accept(_ entry: Entry, as id: UInt32) -> Bool {
        guard !isClosed, entries[id] == nil else { return false }
        entries[id] = entry
        return true
    }

    /// Removes exchange `id`: whether it was there, and whether it was the last a draining
    /// lane waited for (the lane should close now).
    mutating func remove(_ id: UInt32) -> (removed: Bool, lastLeft: Bool) {
        let removed = entries.removeValue(forKey: id) != nil
        return (removed, isDraining && entries.isEmpty)
    }

    /// Starts draining; true when nothing is left (the lane should close now).
    mutating func drain() -> Bool {
        isDraining = true
        return entries.isEmpty
    }

    /// Ends the lane: the entries still on it, the first time only.
    mutating func close() -> [Entry]? {
        guard !isClosed else { return nil }
        isClosed = true
        defer { entries = [:] }
        return Array(entries.values)
    }
}
